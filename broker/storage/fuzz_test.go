package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func FuzzDecodeBatch(f *testing.F) {
	seed := func(base int64, epoch int32, recs []Record) {
		b, err := EncodeBatch(nil, base, epoch, recs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b[:len(b)-1], true)
		f.Add(append(b, b...), true)
	}
	seed(0, 0, []Record{{}})
	seed(7, 3, []Record{rec(1), rec(2), rec(3)})
	seed(1<<40, -1, []Record{{Key: []byte{}, Value: nil, Headers: []Header{{Key: "", Value: []byte{}}, {Key: "k"}}}})
	for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		var e batchEncoder
		b, _, err := e.encode(nil, 3, 1, []Record{rec(4), rec(5), rec(6)}, 0, BatchOptions{Compression: c})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b[:len(b)-2], true)
	}
	f.Add([]byte{}, false)
	// With resign set the CRC is fixed up first, so that the fuzzer gets
	// past it and exercises the header and record decoding behind it.
	f.Fuzz(func(t *testing.T, b []byte, resign bool) {
		if resign && len(b) >= BatchHeaderSize {
			if h, err := ParseBatchHeader(b); err == nil && h.Size() <= len(b) {
				binary.BigEndian.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:h.Size()], castagnoli))
			}
		}
		h, recs, err := DecodeBatch(b)
		_, verr := VerifyBatch(b)
		if (err == nil) != (verr == nil) {
			t.Fatalf("DecodeBatch err %v, VerifyBatch err %v", err, verr)
		}
		if err != nil {
			// A compressed batch that expands past the bound is too large
			// rather than corrupt.
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrBatchTooLarge", err)
			}
			return
		}
		if crc32.Checksum(b[posAttributes:h.Size()], castagnoli) != h.CRC {
			t.Fatal("accepted a batch whose CRC fails")
		}
		if len(recs) != int(h.RecordCount) || recs[len(recs)-1].Offset != h.LastOffset() {
			t.Fatalf("%d records ending at %d for header %+v", len(recs), recs[len(recs)-1].Offset, h)
		}
		maxTs := recs[0].Timestamp
		for i, r := range recs {
			if r.Offset < h.BaseOffset || (i > 0 && r.Offset <= recs[i-1].Offset) {
				t.Fatalf("record offsets out of order: %d", r.Offset)
			}
			maxTs = max(maxTs, r.Timestamp)
		}
		if maxTs != h.MaxTimestamp {
			t.Fatalf("max timestamp %d, header %d", maxTs, h.MaxTimestamp)
		}
		// What decodes re-encodes to the same records.
		again, err := EncodeBatch(nil, h.BaseOffset, h.LeaderEpoch, recs)
		if err != nil {
			t.Fatal(err)
		}
		_, recs2, err := DecodeBatch(again)
		if err != nil || len(recs2) != len(recs) {
			t.Fatalf("re-encoded batch: %v", err)
		}
		for i := range recs {
			a, b := recs[i], recs2[i]
			if a.Timestamp != b.Timestamp || !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil) ||
				!bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil) || len(a.Headers) != len(b.Headers) {
				t.Fatalf("record %d changed in a round trip: %+v vs %+v", i, a, b)
			}
		}
	})
}

// FuzzDecompress feeds arbitrary bytes to every codec's decoder with a
// small limit: it must never panic, never return more than the limit, and
// fail only with ErrCorrupt or ErrBatchTooLarge.
func FuzzDecompress(f *testing.F) {
	for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		for _, src := range [][]byte{[]byte("records records records"), make([]byte, 70000)} {
			b, err := compress(nil, c, src)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(byte(c), b)
			f.Add(byte(c), b[:len(b)/2])
		}
	}
	f.Add(byte(CompressionSnappy), append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 2, 4, 'a'))
	f.Fuzz(func(t *testing.T, codec byte, src []byte) {
		const limit = 64 << 10
		c := Compression(codec % 5)
		out, err := decompress(nil, c, src, limit)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("%v: error %v wraps neither ErrCorrupt nor ErrBatchTooLarge", c, err)
			}
			return
		}
		if len(out) > limit {
			t.Fatalf("%v: %d bytes out, limit %d", c, len(out), limit)
		}
		// What decodes encodes and decodes again to the same bytes.
		again, err := compress(nil, c, out)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decompress(nil, c, again, limit); err != nil || !bytes.Equal(back, out) {
			t.Fatalf("%v: round trip of %d bytes: %d bytes, %v", c, len(out), len(back), err)
		}
	})
}

// recoveryTemplate holds the files of a small log of fuzzRecords records,
// left by a crash (index 0) and by a clean shutdown (index 1).
var recoveryTemplate struct {
	once  sync.Once
	files [2]map[string][]byte
	err   error
}

const fuzzRecords = 120

func fuzzConfig() Config {
	return Config{SegmentBytes: 2048, IndexIntervalBytes: 256}
}

func loadRecoveryTemplate(tb testing.TB) [2]map[string][]byte {
	rt := &recoveryTemplate
	rt.once.Do(func() {
		for i := range 2 {
			dir, err := os.MkdirTemp("", "kairolog-fuzz-template")
			if err != nil {
				rt.err = err
				return
			}
			defer os.RemoveAll(dir)
			l, err := Open(dir, fuzzConfig())
			if err != nil {
				rt.err = err
				return
			}
			for o := int64(0); o < fuzzRecords; {
				var batch []Record
				for j := int64(0); j <= o%5 && o < fuzzRecords; j++ {
					batch = append(batch, rec(o))
					o++
				}
				if _, _, err := l.Append(batch, int32(o/40)); err != nil {
					rt.err = err
					return
				}
			}
			if i == 0 {
				crash(l)
			} else if err := l.Close(); err != nil {
				rt.err = err
				return
			}
			rt.files[i] = map[string][]byte{}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				rt.files[i][e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
			}
		}
	})
	if rt.err != nil {
		tb.Fatal(rt.err)
	}
	return rt.files
}

// FuzzRecovery damages the files of a log directory in arbitrary ways and
// reopens it: Open must succeed without panicking, every record it serves
// must be the one originally written at that offset, every raw batch must
// pass its CRC, and appends must continue at the log end offset.
func FuzzRecovery(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1})
	f.Add([]byte{0, 3, 1, 0, 200, 0, 0})                 // cut a segment
	f.Add([]byte{1, 5, 0, 1, 0, 0x55, 0})                // flip bits
	f.Add([]byte{0, 2, 2, 0, 0, 0, 0, 7, 3, 0, 9, 1, 2}) // delete, overwrite
	f.Add([]byte{1, 9, 4, 0, 0, 40, 0, 4, 1, 0, 3, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 1+6*8 {
			return
		}
		defer func(old func(*os.File) error) { fsync = old }(fsync)
		fsync = func(*os.File) error { return nil }
		tmpl := loadRecoveryTemplate(t)[data[0]&1]
		dir := t.TempDir()
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range tmpl {
				if !yield(n) {
					return
				}
			}
		})
		files := map[string][]byte{}
		for n, b := range tmpl {
			files[n] = slices.Clone(b)
		}
		for ops := data[1:]; len(ops) >= 6; ops = ops[6:] {
			name := names[int(ops[0])%len(names)]
			b := files[name]
			pos := int(ops[2])<<8 | int(ops[3])
			val := ops[4:6]
			switch ops[1] % 5 {
			case 0: // flip bits
				if len(b) > 0 {
					b[pos%len(b)] ^= val[0] | 1
				}
			case 1: // truncate
				files[name] = b[:pos%(len(b)+1)]
			case 2: // lose the file
				delete(files, name)
			case 3: // overwrite a run of bytes
				for i := 0; i < int(val[0]%16)+1 && len(b) > 0; i++ {
					b[(pos+i)%len(b)] = val[1] + byte(i)
				}
			case 4: // garbage after the end
				files[name] = append(b, bytes.Repeat(val, int(val[0]%32))...)
			}
		}
		for n, b := range files {
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l, err := Open(dir, fuzzConfig())
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		end := checkServesOriginals(t, l)
		if base, _, err := l.Append([]Record{rec(end)}, 100); err != nil || base != end {
			t.Fatalf("Append after recovery = %d, %v; want %d", base, err, end)
		}
		if got, err := l.Read(end, -1, 0, 0); err != nil || len(got) != 1 || got[0].Offset != end {
			t.Fatalf("Read of the new record: %v, %v", got, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err = Open(dir, fuzzConfig())
		if err != nil {
			t.Fatalf("second Open: %v", err)
		}
		defer l.Close()
		if got := checkServesOriginals(t, l); got != end+1 {
			t.Fatalf("log end %d after reopening, want %d", got, end+1)
		}
	})
}

// checkServesOriginals reads the whole log, skipping batches reported
// corrupt, and fails if any record differs from the one written at its
// offset or any raw batch fails verification. It returns the log end.
func checkServesOriginals(t *testing.T, l *Log) int64 {
	t.Helper()
	start, end := l.LogStartOffset(), l.LogEndOffset()
	if start < 0 || start > end {
		t.Fatalf("log start %d, end %d", start, end)
	}
	for off := start; off < end; {
		got, err := l.Read(off, -1, 0, 64)
		if errors.Is(err, ErrCorrupt) {
			off++
			continue
		}
		if err != nil || len(got) == 0 {
			t.Fatalf("Read(%d) below end %d: %d records, %v", off, end, len(got), err)
		}
		for _, r := range got {
			if r.Offset < off || r.Offset >= end {
				t.Fatalf("Read(%d) returned offset %d", off, r.Offset)
			}
			if r.Offset < fuzzRecords {
				if err := sameRecords([]Record{r}, r.Offset); err != nil {
					t.Fatal(err)
				}
			}
			off = r.Offset + 1
		}
	}
	for off := start; off < end; {
		raw, err := l.ReadRaw(off, -1, 512)
		if errors.Is(err, ErrCorrupt) {
			off++
			continue
		}
		if err != nil || len(raw) == 0 {
			t.Fatalf("ReadRaw(%d): %d bytes, %v", off, len(raw), err)
		}
		for p := 0; p < len(raw); {
			h, err := VerifyBatch(raw[p:])
			if err != nil {
				t.Fatalf("ReadRaw(%d) returned a bad batch: %v", off, err)
			}
			p += h.Size()
			off = h.NextOffset()
		}
	}
	return end
}

// FuzzProducerSnapshot parses arbitrary bytes as a producer snapshot: it
// must never panic, refuse with errSnapshotCorrupt, and what it accepts
// must encode back to the same bytes.
func FuzzProducerSnapshot(f *testing.F) {
	ps := newProducerState()
	for i := range int64(4) {
		for j := range i + 3 {
			ps.update(BatchHeader{ProducerID: i * 1000, ProducerEpoch: int16(i), BaseSequence: int32(j * 2), LastOffsetDelta: 1,
				BaseOffset: i*100 + j*2}, 1_700_000_000_000+j)
		}
	}
	good := encodeProducerSnapshot(ps)
	f.Add(good, int64(1000))
	f.Add(good[:len(good)-3], int64(1000))
	f.Add(encodeProducerSnapshot(newProducerState()), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, offset int64) {
		got, err := decodeProducerSnapshot(b, offset)
		if err != nil {
			if !errors.Is(err, errSnapshotCorrupt) {
				t.Fatalf("error %v does not wrap errSnapshotCorrupt", err)
			}
			return
		}
		if again := encodeProducerSnapshot(got); !bytes.Equal(again, b) {
			t.Fatalf("accepted snapshot encodes to other bytes")
		}
	})
}

// FuzzAppendBatch offers arbitrary bytes to AppendBatch's checks of a
// producer's batch (with the CRC fixed up when resign is set): they must
// never panic and refuse with one of the produce errors, and a batch they
// take must decode in full with the general decoder, its offset deltas
// 0, 1, 2, … (TestAppendBatch* cover the writing that follows).
func FuzzAppendBatch(f *testing.F) {
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionLZ4} {
		var e batchEncoder
		b, _, err := e.encode(nil, 0, -1, []Record{rec(1), rec(2)}, 0, BatchOptions{Compression: c, Producer: &Producer{ID: 3, BaseSequence: 0}})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b[:len(b)-1], true)
	}
	f.Fuzz(func(t *testing.T, b []byte, resign bool) {
		if resign && len(b) >= BatchHeaderSize {
			if h, err := ParseBatchHeader(b); err == nil && h.Size() <= len(b) {
				binary.BigEndian.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:h.Size()], castagnoli))
			}
		}
		cfg := fuzzConfig()
		cfg.MaxBatchBytes = 64 << 10
		var l Log
		h, err := l.validateProduced(b, cfg.normalized())
		if err != nil {
			for _, want := range []error{ErrCorrupt, ErrBatchTooLarge, ErrInvalidRecord, ErrInvalidProducer} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("unexpected error %v", err)
		}
		h2, recs, err := DecodeBatch(b)
		if err != nil || h2 != h || len(recs) != int(h.RecordCount) || len(b) != h.Size() {
			t.Fatalf("taken batch: %d records of %d, %v", len(recs), h.RecordCount, err)
		}
		for i, r := range recs {
			if r.Offset != h.BaseOffset+int64(i) {
				t.Fatalf("record %d has offset delta %d", i, r.Offset-h.BaseOffset)
			}
		}
	})
}
