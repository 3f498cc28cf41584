package storage

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// The crash tests build a log of crashRecords records in batches of five
// spread over several segments, stop it (cleanly or by abandoning it), damage
// its files the way a crash or a disk would, reopen it and check that every
// record before the damage is readable at its original offset, nothing after
// it is, and appends continue at the right offset, across further restarts.

const crashRecords = 300

type batchPos struct{ pos, base, size int64 }

// batchesIn lists the batches of a segment file by reading their headers.
func batchesIn(t *testing.T, path string) []batchPos {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []batchPos
	for p := 0; p < len(data); {
		h, err := ParseBatchHeader(data[p:])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, p, err)
		}
		out = append(out, batchPos{int64(p), h.BaseOffset, int64(h.Size())})
		p += h.Size()
	}
	return out
}

func lastLog(t *testing.T, dir string) string {
	logs := segmentFiles(t, dir, logSuffix)
	return logs[len(logs)-1]
}

func middleLog(t *testing.T, dir string) string {
	logs := segmentFiles(t, dir, logSuffix)
	if len(logs) < 3 {
		t.Fatalf("only %d segments", len(logs))
	}
	return logs[len(logs)/2]
}

func sibling(path, suffix string) string {
	return path[:len(path)-len(logSuffix)] + suffix
}

func flipByte(t *testing.T, path string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := []byte{0}
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}

func truncateFile(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// overwrite replaces path with fill(its size), creating it if missing.
func overwrite(t *testing.T, path string, fill func(n int) []byte) {
	t.Helper()
	var n int64
	if fi, err := os.Stat(path); err == nil {
		n = fi.Size()
	}
	if err := os.WriteFile(path, fill(int(n)), 0o644); err != nil {
		t.Fatal(err)
	}
}

type damage struct {
	name string
	// apply damages dir and returns the log end offset expected after
	// reopening: the base offset of the first damaged batch.
	apply func(t *testing.T, dir string) int64
	// crashOnly marks damage that only a scan after a crash finds; after
	// a clean shutdown it surfaces as ErrCorrupt on read instead.
	crashOnly bool
}

var damages = []damage{
	{name: "cut last segment mid-batch", apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		last := bs[len(bs)-1]
		truncateFile(t, p, last.pos+last.size/2)
		return last.base
	}},
	{name: "cut last segment mid-header", apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		last := bs[len(bs)-1]
		truncateFile(t, p, last.pos+10)
		return last.base
	}},
	{name: "cut last segment before its last index entry", apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		b := bs[len(bs)/3]
		truncateFile(t, p, b.pos+b.size-1)
		return b.base
	}},
	{name: "flip a byte in the last batch", apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		last := bs[len(bs)-1]
		flipByte(t, p, last.pos+last.size-7)
		return last.base
	}},
	{name: "flip a byte in the last batch's length", apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		last := bs[len(bs)-1]
		flipByte(t, p, last.pos+posLength+3)
		return last.base
	}},
	{name: "flip a byte early in the last segment", crashOnly: true, apply: func(t *testing.T, dir string) int64 {
		p := lastLog(t, dir)
		bs := batchesIn(t, p)
		flipByte(t, p, bs[1].pos+BatchHeaderSize+3)
		return bs[1].base
	}},
	{name: "zeros after the last batch", apply: func(t *testing.T, dir string) int64 {
		f, err := os.OpenFile(lastLog(t, dir), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(make([]byte, 4096))
		f.Close()
		return crashRecords
	}},
	{name: "delete the last index", apply: func(t *testing.T, dir string) int64 {
		os.Remove(sibling(lastLog(t, dir), indexSuffix))
		os.Remove(sibling(lastLog(t, dir), timeIndexSuffix))
		return crashRecords
	}},
	{name: "delete a middle index", apply: func(t *testing.T, dir string) int64 {
		os.Remove(sibling(middleLog(t, dir), indexSuffix))
		return crashRecords
	}},
	{name: "delete a middle time index", apply: func(t *testing.T, dir string) int64 {
		os.Remove(sibling(middleLog(t, dir), timeIndexSuffix))
		return crashRecords
	}},
	{name: "truncate a middle index to half", apply: func(t *testing.T, dir string) int64 {
		p := sibling(middleLog(t, dir), indexSuffix)
		truncateFile(t, p, fileSize(t, p)/2/offsetEntrySize*offsetEntrySize)
		return crashRecords
	}},
	{name: "truncate a middle index mid-entry", apply: func(t *testing.T, dir string) int64 {
		p := sibling(middleLog(t, dir), indexSuffix)
		truncateFile(t, p, fileSize(t, p)-3)
		return crashRecords
	}},
	{name: "truncate a middle index to nothing", apply: func(t *testing.T, dir string) int64 {
		truncateFile(t, sibling(middleLog(t, dir), indexSuffix), 0)
		return crashRecords
	}},
	{name: "truncate a middle time index", apply: func(t *testing.T, dir string) int64 {
		p := sibling(middleLog(t, dir), timeIndexSuffix)
		truncateFile(t, p, fileSize(t, p)-timeEntrySize)
		return crashRecords
	}},
	{name: "truncate the last index", apply: func(t *testing.T, dir string) int64 {
		// After a crash the active segment has no index file yet.
		p := sibling(lastLog(t, dir), indexSuffix)
		if fi, err := os.Stat(p); err == nil {
			truncateFile(t, p, fi.Size()-offsetEntrySize)
		}
		return crashRecords
	}},
	{name: "random garbage in a middle index", apply: func(t *testing.T, dir string) int64 {
		rng := rand.New(rand.NewSource(1))
		overwrite(t, sibling(middleLog(t, dir), indexSuffix), func(n int) []byte {
			b := make([]byte, n)
			rng.Read(b)
			return b
		})
		return crashRecords
	}},
	{name: "zeros in a middle index", apply: func(t *testing.T, dir string) int64 {
		overwrite(t, sibling(middleLog(t, dir), indexSuffix), func(n int) []byte { return make([]byte, n) })
		return crashRecords
	}},
	{name: "0xff in the last index", apply: func(t *testing.T, dir string) int64 {
		overwrite(t, sibling(lastLog(t, dir), indexSuffix), func(n int) []byte { return bytes.Repeat([]byte{0xff}, max(n, 16)) })
		return crashRecords
	}},
	{name: "garbage in a middle time index", apply: func(t *testing.T, dir string) int64 {
		rng := rand.New(rand.NewSource(2))
		overwrite(t, sibling(middleLog(t, dir), timeIndexSuffix), func(n int) []byte {
			b := make([]byte, n)
			rng.Read(b)
			return b
		})
		return crashRecords
	}},
	{name: "half-written new segment without index", apply: func(t *testing.T, dir string) int64 {
		b, _ := EncodeBatch(nil, crashRecords, 1, []Record{rec(crashRecords), rec(crashRecords + 1)})
		os.WriteFile(segmentPath(dir, crashRecords, logSuffix), b[:len(b)/2], 0o644)
		return crashRecords
	}},
	{name: "half-written segment at a wrong offset", apply: func(t *testing.T, dir string) int64 {
		os.WriteFile(segmentPath(dir, crashRecords+40, logSuffix), []byte("partial garbage"), 0o644)
		return crashRecords
	}},
	{name: "corrupt middle segment with its index lost", apply: func(t *testing.T, dir string) int64 {
		p := middleLog(t, dir)
		bs := batchesIn(t, p)
		flipByte(t, p, bs[2].pos+bs[2].size-2)
		os.Remove(sibling(p, indexSuffix))
		return bs[2].base
	}},
	{name: "torn middle segment", apply: func(t *testing.T, dir string) int64 {
		p := middleLog(t, dir)
		bs := batchesIn(t, p)
		last := bs[len(bs)-1]
		truncateFile(t, p, last.pos+5)
		return last.base
	}},
	{name: "recovery point checkpoint lost", apply: func(t *testing.T, dir string) int64 {
		os.Remove(filepath.Join(dir, recoveryPointFile))
		return crashRecords
	}},
	{name: "garbage leader-epoch checkpoint", apply: func(t *testing.T, dir string) int64 {
		os.WriteFile(filepath.Join(dir, leaderEpochFile), []byte("0\n9\n\x00"), 0o644)
		return crashRecords
	}},
	{name: "leftover temporary file and orphan index", apply: func(t *testing.T, dir string) int64 {
		os.WriteFile(filepath.Join(dir, recoveryPointFile+tmpSuffix), []byte("0\n1\n"), 0o644)
		os.WriteFile(segmentPath(dir, 99999, indexSuffix), []byte("orphan!!"), 0o644)
		return crashRecords
	}},
}

func TestCrashRecovery(t *testing.T) {
	for _, d := range damages {
		for _, clean := range []bool{false, true} {
			if clean && d.crashOnly {
				continue
			}
			name := d.name + "/crash"
			if clean {
				name = d.name + "/clean"
			}
			t.Run(name, func(t *testing.T) { testDamage(t, d, clean) })
		}
	}
}

func testDamage(t *testing.T, d damage, clean bool) {
	dir := t.TempDir()
	cfg := smallConfig()
	l := mustOpen(t, dir, cfg)
	appendRange(t, l, 0, crashRecords, 5, 1)
	if clean {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		crash(l)
	}
	indexes := map[string][]byte{}
	for _, p := range segmentFiles(t, dir, "index") {
		indexes[p], _ = os.ReadFile(p)
	}
	want := d.apply(t, dir)

	l = mustOpen(t, dir, cfg)
	checkRecovered(t, l, want)
	// Indexes of sealed segments that lie wholly before the damage are
	// back to what they were, whether kept, completed or rebuilt.
	for i, s := range l.segs[:len(l.segs)-1] {
		if l.segs[i+1].base > want {
			continue
		}
		for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
			p := segmentPath(dir, s.base, suffix)
			if indexes[p] == nil {
				continue // was the active segment, whose index lived in memory
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, indexes[p]) {
				t.Fatalf("%s: %d bytes after recovery, %d before (%v)", filepath.Base(p), len(got), len(indexes[p]), err)
			}
		}
	}
	if l.LatestEpoch() != 1 {
		t.Fatalf("latest epoch %d", l.LatestEpoch())
	}
	if e, end := l.EndOffsetForEpoch(1); e != 1 || end != want {
		t.Fatalf("EndOffsetForEpoch(1) = %d, %d", e, end)
	}
	// Appends continue at the first damaged offset.
	appendRange(t, l, want, want+20, 3, 2)
	checkRecovered(t, l, want+20)
	crash(l)
	l = mustOpen(t, dir, cfg)
	checkRecovered(t, l, want+20)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, cfg)
	defer l.Close()
	checkRecovered(t, l, want+20)
}

// checkRecovered asserts the log holds exactly records [0, end) and that
// its files agree.
func checkRecovered(t *testing.T, l *Log, end int64) {
	t.Helper()
	if l.LogEndOffset() != end {
		t.Fatalf("log end %d, want %d", l.LogEndOffset(), end)
	}
	checkRecords(t, readAll(t, l), 0, end)
	if got, err := l.Read(end, -1, 0, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read(end) = %d records, %v", len(got), err)
	}
	if _, err := l.Read(end+1, -1, 0, 0); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("Read(end+1): %v", err)
	}
	logs := segmentFiles(t, l.dir, logSuffix)
	if len(logs) != l.SegmentCount() {
		t.Fatalf("%d .log files for %d segments", len(logs), l.SegmentCount())
	}
	raw, err := l.ReadRaw(0, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < len(raw); {
		h, err := VerifyBatch(raw[p:])
		if err != nil {
			t.Fatalf("ReadRaw returned a bad batch: %v", err)
		}
		p += h.Size()
	}
}
