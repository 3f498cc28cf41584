package storage

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const createTopicID = "q7Cw0p2bT3aXk9V1mZr4Hg"

// dirContents maps the name of every file in dir to its contents.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// TestCreatedLogBecomesWhatOpenMakes: a log made by Create and one made by
// WriteTopicID and Open start alike and, given the same records and a
// restart, hold the same files byte for byte.
func TestCreatedLogBecomesWhatOpenMakes(t *testing.T) {
	root := t.TempDir()
	created, opened := filepath.Join(root, "created-0"), filepath.Join(root, "opened-0")
	c, err := Create(created, createTopicID, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteTopicID(opened, createTopicID); err != nil {
		t.Fatal(err)
	}
	o := mustOpen(t, opened, smallConfig())
	for _, l := range []*Log{c, o} {
		if l.LogStartOffset() != 0 || l.LogEndOffset() != 0 || l.LatestEpoch() != -1 || l.SegmentCount() != 1 {
			t.Fatalf("%s: start %d, end %d, epoch %d, %d segments; want an empty log", l.Dir(),
				l.LogStartOffset(), l.LogEndOffset(), l.LatestEpoch(), l.SegmentCount())
		}
		if err := l.AssignEpoch(2); err != nil {
			t.Fatal(err)
		}
		appendRange(t, l, 0, 60, 5, 2)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = mustOpen(t, l.Dir(), smallConfig())
		checkRecords(t, readAll(t, l), 0, 60)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got, want := dirContents(t, created), dirContents(t, opened)
	if len(got) != len(want) {
		t.Fatalf("files after Create: %d, after WriteTopicID and Open: %d", len(got), len(want))
	}
	for name, data := range want {
		if got[name] != data {
			t.Errorf("%s after Create: %q, after WriteTopicID and Open: %q", name, got[name], data)
		}
	}
}

// TestCreateFsyncsTheTopicIDThenTheDirectory pins Create's fsync points:
// partition.metadata before it is renamed into place, then the directory,
// last, which makes every entry in it durable at once.
func TestCreateFsyncsTheTopicIDThenTheDirectory(t *testing.T) {
	var synced []string
	defer func(f func(*os.File) error) { fsync = f }(fsync)
	fsync = func(f *os.File) error {
		synced = append(synced, f.Name())
		return f.Sync()
	}
	dir := filepath.Join(t.TempDir(), "orders-0")
	l, err := Create(dir, createTopicID, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := []string{filepath.Join(dir, partitionMetadataFile+tmpSuffix), dir}
	if !slices.Equal(synced, want) {
		t.Fatalf("fsyncs %q, want %q", synced, want)
	}
}

// TestCreatedLogSurvivesACrash leaves a new directory in every state a
// crash may leave Create's work in, and checks that it reopens as an
// empty log (naming its topic once partition.metadata is in place), takes
// records and keeps them across a further crash.
func TestCreatedLogSurvivesACrash(t *testing.T) {
	remove := func(t *testing.T, path string) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		wantID string
	}{
		{"after Create", func(*testing.T, string) {}, createTopicID},
		{"before the directory fsync: no segment", func(t *testing.T, dir string) {
			remove(t, segmentPath(dir, 0, logSuffix))
		}, createTopicID},
		{"before the directory fsync: partition.metadata not renamed", func(t *testing.T, dir string) {
			remove(t, segmentPath(dir, 0, logSuffix))
			if err := os.Rename(filepath.Join(dir, partitionMetadataFile), filepath.Join(dir, partitionMetadataFile+tmpSuffix)); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"before the directory fsync: nothing but the directory", func(t *testing.T, dir string) {
			remove(t, segmentPath(dir, 0, logSuffix))
			remove(t, filepath.Join(dir, partitionMetadataFile))
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "orders-0")
			l, err := Create(dir, createTopicID, smallConfig())
			if err != nil {
				t.Fatal(err)
			}
			crash(l)
			tc.damage(t, dir)

			l = mustOpen(t, dir, smallConfig())
			if id, err := ReadTopicID(dir); err != nil || id != tc.wantID {
				t.Fatalf("after the crash: ReadTopicID = %q, %v; want %q", id, err, tc.wantID)
			}
			if l.LogStartOffset() != 0 || l.LogEndOffset() != 0 || l.LatestEpoch() != -1 {
				t.Fatalf("after the crash: start %d, end %d, epoch %d; want an empty log", l.LogStartOffset(), l.LogEndOffset(), l.LatestEpoch())
			}
			if err := l.AssignEpoch(3); err != nil {
				t.Fatal(err)
			}
			appendRange(t, l, 0, 40, 5, 3)
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			crash(l)

			l = mustOpen(t, dir, smallConfig())
			defer l.Close()
			checkRecords(t, readAll(t, l), 0, 40)
			if e, end := l.EndOffsetForEpoch(3); l.LatestEpoch() != 3 || e != 3 || end != 40 {
				t.Fatalf("epochs after the second crash: latest %d, EndOffsetForEpoch(3) = %d, %d; want 3, 3, 40", l.LatestEpoch(), e, end)
			}
			if data, err := os.ReadFile(filepath.Join(dir, formatFile)); err != nil || string(data) != formatV2+"\n" {
				t.Fatalf("format marker %q, %v; want %q", data, err, formatV2+"\n")
			}
		})
	}
}

func TestCreateRefusesAnExistingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l, err := Create(dir, createTopicID, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, l, 0, 10, 5, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, "other-id", smallConfig()); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create over an existing directory: %v, want os.ErrExist", err)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	checkRecords(t, readAll(t, l), 0, 10)
	if id, err := ReadTopicID(dir); err != nil || id != createTopicID {
		t.Fatalf("ReadTopicID = %q, %v; want %q", id, err, createTopicID)
	}
}

// TestCreateLeavesNothingWhenItFails: a directory Create could not finish is
// removed, so that nothing opens it later as a whole log whose entry in its
// parent was synced.
func TestCreateLeavesNothingWhenItFails(t *testing.T) {
	defer func(f func(*os.File) error) { fsync = f }(fsync)
	for _, tc := range []struct {
		name    string
		topicID string
		failAt  string // the base name of the file whose fsync fails
	}{
		{"invalid topic id", "not/an/id", ""},
		{"topic id fsync fails", createTopicID, partitionMetadataFile + tmpSuffix},
		{"directory fsync fails", createTopicID, "orders-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsync = func(f *os.File) error {
				if filepath.Base(f.Name()) == tc.failAt {
					return errors.New("injected fsync failure")
				}
				return f.Sync()
			}
			dir := filepath.Join(t.TempDir(), "orders-0")
			if _, err := Create(dir, tc.topicID, smallConfig()); err == nil {
				t.Fatal("Create succeeded")
			}
			if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("after a failed Create: Lstat(%s) = %v, want it gone", dir, err)
			}
		})
	}
}
