package storage

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// AppendMany writes the batches one Append per set would write, byte for
// byte and in one flush; a set that cannot be written fails alone.
func TestAppendManyIsOneAppendPerSetInOneFlush(t *testing.T) {
	cfg := smallConfig()
	cfg.FlushMessages = 1 // an fsync after every write
	cfg.MaxBatchBytes = 1024
	huge := []Record{{Timestamp: 1_700_000_000_000, Value: bytes.Repeat([]byte("x"), 2048)}}
	// The third set is compressed; the second is empty and the fourth too
	// large, so neither is written.
	sets := func() []RecordSet {
		var out []RecordSet
		for i, offs := range [][]int64{{0}, {}, {1, 2, 3}, nil, {4}, {5, 6}} {
			var set RecordSet
			for _, o := range offs {
				set.Records = append(set.Records, rec(o))
			}
			if offs == nil {
				set.Records = huge
			}
			if i == 2 {
				set.Options.Compression = CompressionZstd
			}
			out = append(out, set)
		}
		return out
	}

	grouped := mustOpen(t, t.TempDir(), cfg)
	defer grouped.Close()
	in := sets()
	results, errs := grouped.AppendMany(in, 3)
	want := []struct {
		base, last int64
		err        error
	}{{0, 0, nil}, {0, 0, ErrEmptyBatch}, {1, 3, nil}, {0, 0, ErrBatchTooLarge}, {4, 4, nil}, {5, 6, nil}}
	for i, w := range want {
		r, err := results[i], errs[i]
		if (w.err == nil) != (err == nil) || (w.err != nil && !errors.Is(err, w.err)) ||
			(w.err == nil && (r.BaseOffset != w.base || r.LastOffset != w.last)) {
			t.Errorf("set %d: %+v %v, want base %d last %d err %v", i, r, err, w.base, w.last, w.err)
		}
	}
	if in[2].Records[2].Offset != 3 || in[5].Records[0].Offset != 5 {
		t.Errorf("record offsets not set: %d, %d", in[2].Records[2].Offset, in[5].Records[0].Offset)
	}
	if n := grouped.Flushes(); n != 1 {
		t.Errorf("flushes after one AppendMany with flush.messages=1: %d, want 1", n)
	}

	single := mustOpen(t, t.TempDir(), cfg)
	defer single.Close()
	for _, set := range sets() {
		_, _ = single.AppendRecords(set.Records, 3, set.Options)
	}
	if n := single.Flushes(); n != 4 {
		t.Errorf("flushes after four Appends: %d, want 4", n)
	}
	read := func(l *Log) []byte {
		b, err := l.ReadRaw(0, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if g, s := read(grouped), read(single); !bytes.Equal(g, s) {
		t.Errorf("AppendMany wrote %d bytes unlike one Append per set (%d bytes)", len(g), len(s))
	}
	var bases []int64
	for b := read(grouped); len(b) > 0; {
		h, err := ParseBatchHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, h.BaseOffset)
		b = b[h.Size():]
	}
	if len(bases) != 4 || bases[0] != 0 || bases[1] != 1 || bases[2] != 4 || bases[3] != 5 {
		t.Errorf("batches at %v, want one per written set at 0, 1, 4, 5", bases)
	}
}

// A log that takes no writes fails every set, and a stale epoch too.
func TestAppendManyRefusesAll(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	if _, _, err := l.Append([]Record{rec(0)}, 5); err != nil {
		t.Fatal(err)
	}
	_, errs := l.AppendMany([]RecordSet{{Records: []Record{rec(1)}}, {Records: []Record{rec(2)}}}, 4)
	for _, err := range errs {
		if !errors.Is(err, ErrStaleEpoch) {
			t.Errorf("stale epoch: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, errs = l.AppendMany([]RecordSet{{Records: []Record{rec(1)}}}, 5)
	if !errors.Is(errs[0], ErrClosed) {
		t.Errorf("closed log: %v", errs[0])
	}
}

// Idempotent producers' sets in one group are checked against each other
// as one AppendRecords per set would check them: a producer's next
// sequence follows its set earlier in the group, a retry of that set is
// its duplicate, and a gap in the sequence fails alone.
func TestAppendManyIdempotentProducers(t *testing.T) {
	set := func(id int64, seq int32, n int) RecordSet {
		recs := make([]Record, n)
		for i := range recs {
			recs[i].Value = fmt.Appendf(nil, "p%d-s%d", id, int64(seq)+int64(i))
		}
		return RecordSet{Records: recs, Options: BatchOptions{Producer: &Producer{ID: id, BaseSequence: seq}}}
	}
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	if _, err := l.AppendRecords(set(7, 0, 2).Records, 0, set(7, 0, 2).Options); err != nil {
		t.Fatal(err)
	}
	results, errs := l.AppendMany([]RecordSet{
		set(7, 2, 1), // continues producer 7: offset 2
		set(8, 0, 3), // a new producer: offsets 3..5
		set(7, 3, 2), // continues its set above in this group: 6..7
		set(7, 2, 1), // a retry of the first set: its offsets, nothing written
		set(8, 5, 1), // skips sequences 3 and 4
		set(8, 3, 1), // follows producer 8's set: 8
		set(7, 0, 2), // a retry of the batch written before the group
	}, 0)
	want := []struct {
		base, last int64
		dup        bool
		err        error
	}{{2, 2, false, nil}, {3, 5, false, nil}, {6, 7, false, nil}, {2, 2, true, nil},
		{0, 0, false, ErrOutOfOrderSequence}, {8, 8, false, nil}, {0, 1, true, nil}}
	for i, w := range want {
		r, err := results[i], errs[i]
		if !errors.Is(err, w.err) || (w.err == nil && (r.BaseOffset != w.base || r.LastOffset != w.last || r.Duplicate != w.dup)) {
			t.Errorf("set %d: %+v %v, want base %d last %d duplicate %v err %v", i, r, err, w.base, w.last, w.dup, w.err)
		}
	}
	if leo := l.LogEndOffset(); leo != 9 {
		t.Errorf("log end offset %d, want 9: duplicates and the failed set write nothing", leo)
	}
	recs, err := l.Read(0, -1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	wantValues := "[p7-s0 p7-s1 p7-s2 p8-s0 p8-s1 p8-s2 p7-s3 p7-s4 p8-s3]"
	if fmt.Sprint(got) != wantValues {
		t.Errorf("log holds %v, want %s", got, wantValues)
	}
}
