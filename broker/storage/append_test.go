package storage

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestAppendAssignsOffsetsAndTimestamps(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Config{})
	defer l.Close()
	before := time.Now().UnixMilli()
	recs := []Record{{Value: []byte("a")}, {Value: []byte("b"), Timestamp: 5}, {Value: []byte("c"), Offset: 999}}
	base, last, err := l.Append(recs, 0)
	if err != nil || base != 0 || last != 2 {
		t.Fatalf("Append = %d, %d, %v", base, last, err)
	}
	for i, r := range recs {
		if r.Offset != int64(i) {
			t.Fatalf("record %d got offset %d", i, r.Offset)
		}
	}
	if recs[0].Timestamp < before || recs[0].Timestamp > time.Now().UnixMilli() || recs[1].Timestamp != 5 {
		t.Fatalf("timestamps %d %d", recs[0].Timestamp, recs[1].Timestamp)
	}
	got, err := l.Read(0, -1, 0, 0)
	if err != nil || len(got) != 3 || got[0].Timestamp != recs[0].Timestamp || got[2].Offset != 2 || string(got[2].Value) != "c" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	if base, last, _ := l.Append([]Record{{}}, 0); base != 3 || last != 3 {
		t.Fatalf("second Append = %d, %d", base, last)
	}
}

func TestAppendRejects(t *testing.T) {
	cfg := Config{MaxBatchBytes: 1000}
	l := mustOpen(t, t.TempDir(), cfg)
	defer l.Close()
	if _, _, err := l.Append(nil, 0); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty: %v", err)
	}
	if _, _, err := l.Append([]Record{{Value: make([]byte, 1000)}}, 0); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, _, err := l.Append([]Record{{Value: make([]byte, 900)}}, 3); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Append([]Record{{}}, 2); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("stale epoch: %v", err)
	}
	if l.LogEndOffset() != 1 {
		t.Fatalf("rejected appends moved the log end to %d", l.LogEndOffset())
	}
	// A negative epoch is written but not tracked.
	if _, _, err := l.Append([]Record{{}}, -1); err != nil || l.LatestEpoch() != 3 {
		t.Fatalf("epoch -1: %v, latest %d", err, l.LatestEpoch())
	}
	l.SetConfig(Config{MaxBatchBytes: 2000})
	if _, _, err := l.Append([]Record{{Value: make([]byte, 1000)}}, 3); err != nil {
		t.Fatalf("after SetConfig: %v", err)
	}
}

func TestRollBySegmentBytes(t *testing.T) {
	dir := t.TempDir()
	cfg := smallConfig()
	l := mustOpen(t, dir, cfg)
	appendRange(t, l, 0, 400, 3, 0)
	for _, p := range segmentFiles(t, dir, logSuffix) {
		if n := fileSize(t, p); n > cfg.SegmentBytes || n == 0 {
			t.Fatalf("%s holds %d bytes, segment.bytes is %d", p, n, cfg.SegmentBytes)
		}
	}
	// A batch larger than a segment gets a segment to itself.
	big := []Record{{Value: make([]byte, 3*cfg.SegmentBytes)}}
	l.SetConfig(Config{SegmentBytes: cfg.SegmentBytes, IndexIntervalBytes: 512, MaxBatchBytes: 1 << 20})
	segs := l.SegmentCount()
	if _, _, err := l.Append(big, 0); err != nil {
		t.Fatal(err)
	}
	appendRange(t, l, 401, 405, 1, 0)
	if l.SegmentCount() != segs+2 {
		t.Fatalf("segments %d → %d, want +2", segs, l.SegmentCount())
	}
	l.Close()
	l = mustOpen(t, dir, cfg)
	defer l.Close()
	got, err := l.Read(400, -1, 0, 0)
	if err != nil || len(got) != 5 || len(got[0].Value) != 3*int(cfg.SegmentBytes) {
		t.Fatalf("Read after big batch: %d records, %v", len(got), err)
	}
}

func TestRollBySegmentMs(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Config{SegmentMs: time.Hour})
	defer l.Close()
	for range 3 {
		if _, _, err := l.Append([]Record{{Value: []byte("x")}}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if l.SegmentCount() != 1 {
		t.Fatalf("%d segments before segment.ms passed", l.SegmentCount())
	}
	// Old record timestamps alone do not roll a segment.
	if _, _, err := l.Append([]Record{{Timestamp: 1}}, 0); err != nil || l.SegmentCount() != 1 {
		t.Fatalf("old timestamp rolled: %d segments, %v", l.SegmentCount(), err)
	}
	l.SetConfig(Config{SegmentMs: 20 * time.Millisecond})
	time.Sleep(30 * time.Millisecond)
	if _, _, err := l.Append([]Record{{Value: []byte("y")}}, 0); err != nil {
		t.Fatal(err)
	}
	if l.SegmentCount() != 2 {
		t.Fatalf("%d segments after segment.ms passed", l.SegmentCount())
	}
	l.SetConfig(Config{SegmentMs: time.Hour})
	if _, _, err := l.Append([]Record{{Value: []byte("z")}}, 0); err != nil || l.SegmentCount() != 2 {
		t.Fatalf("fresh segment rolled again: %d, %v", l.SegmentCount(), err)
	}
}

// TestAppendRawReplicates copies a leader's log to a follower through
// ReadRaw/AppendRaw and checks the follower is byte-for-byte the same.
func TestAppendRawReplicates(t *testing.T) {
	leader := mustOpen(t, t.TempDir(), smallConfig())
	defer leader.Close()
	appendRange(t, leader, 0, 100, 5, 1)
	appendRange(t, leader, 100, 230, 13, 4)
	follower := mustOpen(t, t.TempDir(), smallConfig())
	defer follower.Close()
	for follower.LogEndOffset() < leader.LogEndOffset() {
		raw, err := leader.ReadRaw(follower.LogEndOffset(), -1, 1500)
		if err != nil || len(raw) == 0 {
			t.Fatalf("ReadRaw(%d) = %d bytes, %v", follower.LogEndOffset(), len(raw), err)
		}
		last, err := follower.AppendRaw(raw)
		if err != nil {
			t.Fatal(err)
		}
		if last != follower.LogEndOffset()-1 {
			t.Fatalf("AppendRaw returned %d, log end %d", last, follower.LogEndOffset())
		}
	}
	checkRecords(t, readAll(t, follower), 0, 230)
	if follower.LatestEpoch() != 4 {
		t.Fatalf("follower latest epoch %d", follower.LatestEpoch())
	}
	for _, e := range []int32{0, 1, 2, 4} {
		fe, fo := follower.EndOffsetForEpoch(e)
		le, lo := leader.EndOffsetForEpoch(e)
		if fe != le || fo != lo {
			t.Fatalf("epoch %d: follower (%d, %d), leader (%d, %d)", e, fe, fo, le, lo)
		}
	}
	a, _ := leader.ReadRaw(0, -1, 0)
	b, _ := follower.ReadRaw(0, -1, 0)
	if !bytes.Equal(a, b) {
		t.Fatal("follower bytes differ from the leader's")
	}
	if last, err := follower.AppendRaw(nil); err != nil || last != 229 {
		t.Fatalf("empty AppendRaw = %d, %v", last, err)
	}
}

func TestAppendRawRejects(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 10, 5, 3)
	b1, _ := EncodeBatch(nil, 10, 3, []Record{rec(10), rec(11)})
	b2, _ := EncodeBatch(nil, 12, 3, []Record{rec(12)})
	gap, _ := EncodeBatch(nil, 14, 3, []Record{rec(14)})
	stale, _ := EncodeBatch(nil, 12, 2, []Record{rec(12)})
	flipped := append([]byte(nil), b2...)
	flipped[len(flipped)-3] ^= 1
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for name, c := range map[string]struct {
		raw  []byte
		want error
	}{
		"wrong start":      {b2, ErrNotContiguous},
		"gap":              {cat(b1, gap), ErrNotContiguous},
		"repeated":         {cat(b1, b1), ErrNotContiguous},
		"corrupt second":   {cat(b1, flipped), ErrCorrupt},
		"torn second":      {cat(b1, b2[:len(b2)-1]), ErrCorrupt},
		"stale epoch":      {cat(b1, stale), ErrStaleEpoch},
		"garbage":          {[]byte("not a batch at all, not at all, not at all, not at all"), ErrCorrupt},
		"trailing garbage": {cat(b1, []byte{1, 2, 3}), ErrCorrupt},
	} {
		if _, err := l.AppendRaw(c.raw); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
		if l.LogEndOffset() != 10 {
			t.Fatalf("%s: rejected AppendRaw moved the log end to %d", name, l.LogEndOffset())
		}
	}
	newer, _ := EncodeBatch(nil, 12, 5, []Record{rec(12)})
	if last, err := l.AppendRaw(cat(b1, newer)); err != nil || last != 12 || l.LatestEpoch() != 5 {
		t.Fatalf("AppendRaw = %d, %v, epoch %d", last, err, l.LatestEpoch())
	}
	if e, end := l.EndOffsetForEpoch(3); e != 3 || end != 12 {
		t.Fatalf("EndOffsetForEpoch(3) = %d, %d", e, end)
	}
	checkRecords(t, readAll(t, l), 0, 13)
}
