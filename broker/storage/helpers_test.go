package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// smallConfig makes segments roll every few batches.
func smallConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 4 << 10
	c.IndexIntervalBytes = 512
	c.RetentionMs = -1
	return c
}

func mustOpen(t testing.TB, dir string, cfg Config) *Log {
	t.Helper()
	l, err := Open(dir, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// crash abandons l the way a killed process would: files closed, nothing
// flushed, no index files or clean-shutdown marker written.
func crash(l *Log) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.flushTimer != nil {
		l.flushTimer.Stop()
	}
	l.stopSyncer()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, s := range l.segs {
		_ = s.close()
	}
}

// rec builds the record expected at offset off in tests.
func rec(off int64) Record {
	r := Record{
		Timestamp: 1_700_000_000_000 + off,
		Key:       []byte(fmt.Sprintf("key-%d", off)),
		Value:     bytes.Repeat([]byte{byte(off)}, 20+int(off%50)),
	}
	if off%3 == 0 {
		r.Headers = []Header{{Key: "h", Value: []byte(fmt.Sprint(off))}, {Key: "nil"}}
	}
	if off%7 == 0 {
		r.Key = nil
	}
	return r
}

// appendRange appends records [from, to) in batches of per.
func appendRange(t testing.TB, l *Log, from, to int64, per int, epoch int32) {
	t.Helper()
	for off := from; off < to; {
		var batch []Record
		for i := 0; i < per && off < to; i++ {
			batch = append(batch, rec(off))
			off++
		}
		base, last, err := l.Append(batch, epoch)
		if err != nil {
			t.Fatalf("Append at %d: %v", off, err)
		}
		if want := off - int64(len(batch)); base != want || last != off-1 {
			t.Fatalf("Append = (%d, %d), want (%d, %d)", base, last, want, off-1)
		}
	}
}

// checkRecords asserts that got is exactly the records [from, to).
func checkRecords(t testing.TB, got []Record, from, to int64) {
	t.Helper()
	if int64(len(got)) != to-from {
		t.Fatalf("got %d records, want %d (offsets %d..%d)", len(got), to-from, from, to)
	}
	for i, r := range got {
		checkRecord(t, r, from+int64(i))
	}
}

func checkRecord(t testing.TB, r Record, off int64) {
	t.Helper()
	w := rec(off)
	if r.Offset != off || r.Timestamp != w.Timestamp || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
		!bytes.Equal(r.Value, w.Value) || len(r.Headers) != len(w.Headers) {
		t.Fatalf("record at %d = %+v, want %+v", off, r, w)
	}
	for i := range r.Headers {
		if r.Headers[i].Key != w.Headers[i].Key || !bytes.Equal(r.Headers[i].Value, w.Headers[i].Value) ||
			(r.Headers[i].Value == nil) != (w.Headers[i].Value == nil) {
			t.Fatalf("record %d header %d = %+v, want %+v", off, i, r.Headers[i], w.Headers[i])
		}
	}
}

// readAll reads the whole log in small steps, checking every record.
func readAll(t testing.TB, l *Log) []Record {
	t.Helper()
	var out []Record
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		got, err := l.Read(off, -1, 700, 0)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(got) == 0 {
			t.Fatalf("Read(%d) returned nothing below end %d", off, l.LogEndOffset())
		}
		out = append(out, got...)
		off = got[len(got)-1].Offset + 1
	}
	return out
}

func segmentFiles(t testing.TB, dir, suffix string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
