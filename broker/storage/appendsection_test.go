package storage

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// A section appended as it is (RecordSet.Section) is stored as the same
// records appended as Records are, byte for byte, compressed or not.
func TestAppendSectionStoresWhatRecordsStore(t *testing.T) {
	var recs []Record
	for off := range int64(40) {
		recs = append(recs, rec(off))
	}
	recs = append(recs, sectionRecords[2:]...) // empty key and value, headers, timestamp -1
	recs[len(recs)-2].Timestamp = 1_699_999_999_000
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionZstd} {
		t.Run(c.String(), func(t *testing.T) {
			opts := BatchOptions{Compression: c}
			asRecords := mustOpen(t, t.TempDir(), DefaultConfig())
			defer asRecords.Close()
			asSection := mustOpen(t, t.TempDir(), DefaultConfig())
			defer asSection.Close()
			_, errs := asRecords.AppendMany([]RecordSet{{Records: recs[:3], Options: opts}, {Records: recs[3:], Options: opts}}, 2)
			if errs[0] != nil || errs[1] != nil {
				t.Fatal(errs)
			}
			res, errs := asSection.AppendMany([]RecordSet{
				{Section: AppendSection(nil, recs[:3]), Count: 3, Options: opts},
				{Section: AppendSection(nil, recs[3:]), Count: len(recs) - 3, Options: opts},
			}, 2)
			if errs[0] != nil || errs[1] != nil {
				t.Fatal(errs)
			}
			if res[1].BaseOffset != 3 || res[1].LastOffset != int64(len(recs)-1) {
				t.Errorf("second section at %+v, want offsets 3..%d", res[1], len(recs)-1)
			}
			want, err := asRecords.ReadRaw(0, -1, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			got, err := asSection.ReadRaw(0, -1, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("stored from sections:\n%x\nfrom records:\n%x", got, want)
			}
		})
	}
}

// A zero timestamp in a section is the time of the append, as it is for
// Records; the others are kept.
func TestAppendSectionStampsZeroTimestamps(t *testing.T) {
	l := mustOpen(t, t.TempDir(), DefaultConfig())
	defer l.Close()
	recs := []Record{{Value: []byte("now")}, {Timestamp: 5, Value: []byte("five")}, {Value: []byte("now again")}}
	before := time.Now().UnixMilli()
	if _, errs := l.AppendMany([]RecordSet{{Section: AppendSection(nil, recs), Count: 3}}, 0); errs[0] != nil {
		t.Fatal(errs[0])
	}
	after := time.Now().UnixMilli()
	got, err := l.Read(0, -1, 1<<20, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("read %d records, %v", len(got), err)
	}
	for i, r := range got {
		if string(r.Value) != string(recs[i].Value) || r.Offset != int64(i) {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if got[0].Timestamp < before || got[0].Timestamp > after || got[2].Timestamp != got[0].Timestamp || got[1].Timestamp != 5 {
		t.Errorf("timestamps %d, %d, %d; want the append's time (%d..%d), 5, the append's time",
			got[0].Timestamp, got[1].Timestamp, got[2].Timestamp, before, after)
	}
}

// A malformed section fails alone, with ErrCorruptBatch (what the
// producer sent, not the log, is corrupt): nothing of it is
// written, and the sets around it in the same group are.
func TestAppendSectionRefusesMalformed(t *testing.T) {
	two := AppendSection(nil, sectionRecords[:2])
	swapped := AppendSection(nil, []Record{{Value: []byte("a")}})
	swapped = appendRecord(swapped, &Record{Value: []byte("b")}, 0, 0)
	badKey := AppendSection(nil, []Record{{Key: []byte("key"), Value: []byte("v")}})
	badKey[4] = 0x7e // the key's length, far past the record
	for name, set := range map[string]RecordSet{
		"cut short":             {Section: two[:len(two)-1], Count: 2},
		"fewer than announced":  {Section: two, Count: 3},
		"more than announced":   {Section: two, Count: 1},
		"bytes after":           {Section: append(append([]byte{}, two...), 0x02, 0x00), Count: 2},
		"negative count":        {Section: two, Count: -1},
		"count beyond bytes":    {Section: two, Count: 1 << 30},
		"repeated offset delta": {Section: swapped, Count: 2},
		"key past the record":   {Section: badKey, Count: 1},
	} {
		t.Run(name, func(t *testing.T) {
			l := mustOpen(t, t.TempDir(), DefaultConfig())
			defer l.Close()
			ok := RecordSet{Records: []Record{rec(0)}}
			res, errs := l.AppendMany([]RecordSet{ok, set, {Records: []Record{rec(1)}}}, 0)
			if !errors.Is(errs[1], ErrCorruptBatch) || !errors.Is(errs[1], ErrCorrupt) {
				t.Errorf("malformed section: %+v, %v; want ErrCorruptBatch", res[1], errs[1])
			}
			if errs[0] != nil || errs[2] != nil || res[2].BaseOffset != 1 || l.LogEndOffset() != 2 {
				t.Errorf("sets around it: %v, %v, second at %d, log end %d; want both written at 0 and 1",
					errs[0], errs[2], res[2].BaseOffset, l.LogEndOffset())
			}
		})
	}
}

// FuzzAppendSection: whatever a peer sends as a section, the leader never
// panics, refuses what DecodeSection refuses, and writes a batch that
// decodes to exactly the records DecodeSection reads.
func FuzzAppendSection(f *testing.F) {
	f.Add(AppendSection(nil, sectionRecords), len(sectionRecords))
	f.Add(AppendSection(nil, []Record{rec(3), rec(7)}), 2)
	f.Add([]byte{0x0e, 0, 0, 0, 1, 'k', 1, 'v', 0}, 1)
	f.Fuzz(func(t *testing.T, section []byte, count int) {
		const now = 1_800_000_000_000
		var e batchEncoder
		batch, _, err := e.encodeSection(nil, 10, 4, section, count, now, BatchOptions{})
		want, derr := DecodeSection(section, count)
		if count == 0 {
			if !errors.Is(err, ErrEmptyBatch) {
				t.Fatalf("an empty section: %v, want ErrEmptyBatch", err)
			}
			return
		}
		if (err == nil) != (derr == nil) {
			t.Fatalf("encodeSection: %v; DecodeSection: %v", err, derr)
		}
		if err != nil {
			if !errors.Is(err, ErrCorruptBatch) {
				t.Fatalf("refused with %v, want ErrCorruptBatch", err)
			}
			return
		}
		h, got, err := DecodeBatch(batch)
		if err != nil || h.BaseOffset != 10 || h.LeaderEpoch != 4 || len(batch) != h.Size() {
			t.Fatalf("written batch %+v: %v", h, err)
		}
		for i := range want {
			want[i].Offset += 10
			if want[i].Timestamp == 0 {
				want[i].Timestamp = now
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("batch holds\n%+v\nsection holds\n%+v", got, want)
		}
	})
}

// BenchmarkAppendForwarded is the leader's cost of a produce another
// broker passed on, 333 records of 100 bytes (a third of an HTTP batch of
// 1000): decoding the section into Records and appending those, against
// appending the section as it came.
func BenchmarkAppendForwarded(b *testing.B) {
	recs := make([]Record, 333)
	for i := range recs {
		recs[i] = Record{Key: fmt.Appendf(nil, "key-%d", i), Value: bytes.Repeat([]byte{'v'}, 100)}
	}
	section := AppendSection(nil, recs)
	cfg := DefaultConfig()
	cfg.SegmentBytes = 64 << 20
	for _, mode := range []string{"decoded", "section"} {
		b.Run(mode, func(b *testing.B) {
			l := mustOpen(b, b.TempDir(), cfg)
			defer l.Close()
			b.SetBytes(int64(len(section)))
			b.ReportAllocs()
			for b.Loop() {
				set := RecordSet{Section: section, Count: len(recs)}
				if mode == "decoded" {
					decoded, err := DecodeSection(section, len(recs))
					if err != nil {
						b.Fatal(err)
					}
					set = RecordSet{Records: decoded}
				}
				if _, errs := l.AppendMany([]RecordSet{set}, 0); errs[0] != nil {
					b.Fatal(errs[0])
				}
			}
		})
	}
}
