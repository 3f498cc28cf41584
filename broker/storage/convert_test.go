package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The fixture in testdata/format-v1 was written by the storage package
// before batches became Kafka's v2 (see its gen.go); expected.json holds
// what that code read back from each directory after reopening it.

type fixtureHeader struct {
	Key   string  `json:"key"`
	Value *[]byte `json:"value"`
}

type fixtureRecord struct {
	Offset    int64           `json:"offset"`
	Timestamp int64           `json:"timestamp"`
	Key       *[]byte         `json:"key"`
	Value     *[]byte         `json:"value"`
	Headers   []fixtureHeader `json:"headers"`
}

type fixturePartition struct {
	LogStartOffset int64           `json:"log_start_offset"`
	LogEndOffset   int64           `json:"log_end_offset"`
	LatestEpoch    int32           `json:"latest_epoch"`
	Epochs         [][2]int64      `json:"epochs"`
	Records        []fixtureRecord `json:"records"`
}

// fixtureConfig is the configuration the fixture was written with.
func fixtureConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 8 << 10
	c.IndexIntervalBytes = 1024
	c.RetentionMs = -1
	c.SegmentMs = 0
	return c
}

func loadFixture(t *testing.T) map[string]fixturePartition {
	t.Helper()
	data, err := os.ReadFile("testdata/format-v1/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]fixturePartition
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// copyFixture copies one partition directory of the fixture into a
// temporary directory and returns its path.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("cp", "-a", filepath.Join("testdata/format-v1/data", name), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	return dst
}

func optBytes(p *[]byte) []byte {
	if p == nil {
		return nil
	}
	if *p == nil {
		return []byte{}
	}
	return *p
}

// checkFixture checks that l serves exactly what the format 1 code read
// from the same directory.
func checkFixture(t *testing.T, l *Log, want fixturePartition) {
	t.Helper()
	if l.LogStartOffset() != want.LogStartOffset || l.LogEndOffset() != want.LogEndOffset || l.LatestEpoch() != want.LatestEpoch {
		t.Fatalf("log start %d, end %d, latest epoch %d; want %d, %d, %d", l.LogStartOffset(), l.LogEndOffset(), l.LatestEpoch(),
			want.LogStartOffset, want.LogEndOffset, want.LatestEpoch)
	}
	for _, e := range want.Epochs {
		if found, end := l.EndOffsetForEpoch(int32(e[0])); found != int32(e[0]) || end != e[1] {
			t.Errorf("EndOffsetForEpoch(%d) = (%d, %d), want (%d, %d)", e[0], found, end, e[0], e[1])
		}
	}
	var got []Record
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		recs, err := l.Read(off, -1, 1<<20, 0)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		got = append(got, recs...)
		off = recs[len(recs)-1].Offset + 1
	}
	if len(got) != len(want.Records) {
		t.Fatalf("%d records, want %d", len(got), len(want.Records))
	}
	for i, w := range want.Records {
		r := got[i]
		ok := r.Offset == w.Offset && r.Timestamp == w.Timestamp &&
			bytes.Equal(r.Key, optBytes(w.Key)) && (r.Key == nil) == (w.Key == nil) &&
			bytes.Equal(r.Value, optBytes(w.Value)) && (r.Value == nil) == (w.Value == nil) &&
			len(r.Headers) == len(w.Headers)
		for j := 0; ok && j < len(r.Headers); j++ {
			h, wh := r.Headers[j], w.Headers[j]
			ok = h.Key == wh.Key && bytes.Equal(h.Value, optBytes(wh.Value)) && (h.Value == nil) == (wh.Value == nil)
		}
		if !ok {
			t.Fatalf("record %d = %+v, want %+v", i, r, w)
		}
	}
}

// checkV2OnDisk checks that every segment holds v2 batches only and that
// nothing of the conversion is left behind.
func checkV2OnDisk(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{convertStaging, convertReady} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", name, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, formatFile)); err != nil || string(data) != "2\n" {
		t.Errorf("%s = %q, %v", formatFile, data, err)
	}
	for _, path := range segmentFiles(t, dir, logSuffix) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < len(data); {
			h, err := VerifyBatch(data[p:])
			if err != nil {
				t.Fatalf("%s at byte %d: %v", path, p, err)
			}
			p += h.Size()
		}
	}
}

func TestConvertFormat1Fixture(t *testing.T) {
	want := loadFixture(t)
	for _, name := range []string{"clean-0", "crashed-0", "empty-0"} {
		t.Run(name, func(t *testing.T) {
			dir := copyFixture(t, name)
			l := mustOpen(t, dir, fixtureConfig())
			checkFixture(t, l, want[name])
			checkV2OnDisk(t, dir)
			// The converted log takes appends and survives a restart
			// without being converted again.
			end := l.LogEndOffset()
			base, _, err := l.Append([]Record{{Value: []byte("after")}}, want[name].LatestEpoch+1)
			if err != nil || base != end {
				t.Fatalf("Append = %d, %v; want offset %d", base, err, end)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			before := statSegments(t, dir)
			l = mustOpen(t, dir, fixtureConfig())
			defer l.Close()
			if after := statSegments(t, dir); !slices.Equal(before, after) {
				t.Errorf("segments changed when reopened: %v, then %v", before, after)
			}
			recs, err := l.Read(end, -1, 0, 0)
			if err != nil || len(recs) != 1 || string(recs[0].Value) != "after" {
				t.Fatalf("Read(%d) = %+v, %v", end, recs, err)
			}
		})
	}
}

// statSegments lists each segment log's name, size and modification time.
func statSegments(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range segmentFiles(t, dir, logSuffix) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %v", filepath.Base(p), fi.Size(), fi.ModTime()))
	}
	return out
}

// TestConvertFormat1CrashAtEveryStep stops the conversion before each of
// its steps in turn, as a crash would, and opens the directory again: the
// log must come out exactly as an uninterrupted conversion leaves it,
// whether the next Open rolls the conversion back (before its commit
// point) or finishes it (after).
func TestConvertFormat1CrashAtEveryStep(t *testing.T) {
	want := loadFixture(t)
	errCrash := errors.New("crash")
	// What a crash leaves on disk is not in question here, only what the
	// next Open makes of it: fsync would only slow the many opens down.
	defer func(f func(*os.File) error) { fsync, convertStep = f, nil }(fsync)
	fsync = func(*os.File) error { return nil }
	for _, name := range []string{"clean-0", "crashed-0"} {
		steps := 0
		for k := 1; ; k++ {
			dir := copyFixture(t, name)
			calls := 0
			convertStep = func() error {
				if calls++; calls == k {
					return errCrash
				}
				return nil
			}
			l, err := Open(dir, fixtureConfig())
			convertStep = nil
			if err == nil {
				// No step k: every step has been crashed at.
				l.Close()
				break
			}
			if !errors.Is(err, errCrash) {
				t.Fatalf("%s, crash at step %d: Open: %v", name, k, err)
			}
			steps++
			l = mustOpen(t, dir, fixtureConfig())
			checkFixture(t, l, want[name])
			l.Close()
			checkV2OnDisk(t, dir)
		}
		if steps < 8 {
			t.Fatalf("%s: only %d steps crashed at", name, steps)
		}
		t.Logf("%s: crashed at each of %d steps", name, steps)
	}
}

// TestConvertSplitsGrownSegments: converted batches are 15 bytes larger,
// so a segment near the largest size is split in two.
func TestConvertSplitsGrownSegments(t *testing.T) {
	want := loadFixture(t)["clean-0"]
	dir := copyFixture(t, "clean-0")
	bases, err := listSegments(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := convertFormat1Limit(dir, bases, 4<<10); err != nil {
		t.Fatal(err)
	}
	l := mustOpen(t, dir, fixtureConfig())
	defer l.Close()
	if n := l.SegmentCount(); n <= len(bases) {
		t.Fatalf("%d segments from %d, want more", n, len(bases))
	}
	checkFixture(t, l, want)
	checkV2OnDisk(t, dir)
}

// TestOpenKeepsV2WithoutMarker: a v2 log whose marker is gone or damaged
// is not mistaken for format 1, even with its first batch damaged too.
func TestOpenKeepsV2WithoutMarker(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, dir string){
		"marker missing": func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, formatFile)); err != nil {
				t.Fatal(err)
			}
		},
		"marker damaged": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, formatFile), []byte("20"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"marker and first batch damaged": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, formatFile), []byte{}, 0o644); err != nil {
				t.Fatal(err)
			}
			flipByte(t, segmentFiles(t, dir, logSuffix)[0], BatchHeaderSize+3)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, smallConfig())
			appendRange(t, l, 0, 200, 5, 0)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			damage(t, dir)
			l = mustOpen(t, dir, smallConfig())
			defer l.Close()
			from := int64(0)
			if name == "marker and first batch damaged" {
				from = 5 // the damaged batch is not served
			}
			var got []Record
			for off := from; off < 200; {
				recs, err := l.Read(off, -1, 0, 0)
				if err != nil {
					t.Fatalf("Read(%d): %v", off, err)
				}
				got = append(got, recs...)
				off = recs[len(recs)-1].Offset + 1
			}
			checkRecords(t, got, from, 200)
			if data, err := os.ReadFile(filepath.Join(dir, formatFile)); err != nil || string(data) != "2\n" {
				t.Errorf("%s = %q, %v", formatFile, data, err)
			}
		})
	}
}
