package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Files kept next to the segments. Checkpoints use Kafka's text layout: a
// version line ("0"), an entry-count line, then one entry per line with
// space-separated integers.
const (
	cleanShutdownFile  = ".clean-shutdown"
	recoveryPointFile  = "recovery-point-offset-checkpoint"
	logStartOffsetFile = "log-start-offset-checkpoint"
	leaderEpochFile    = "leader-epoch-checkpoint"
	tmpSuffix          = ".tmp"
	checkpointVersion  = 0
)

var errCheckpointCorrupt = errors.New("storage: corrupt checkpoint")

// writeCheckpoint atomically replaces dir/name with entries: it writes a
// temporary file, fsyncs it, renames it into place and fsyncs dir.
func writeCheckpoint(dir, name string, entries [][]int64) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(entries))
	for _, e := range entries {
		for i, v := range e {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := writeFileSync(path+tmpSuffix, b.Bytes()); err != nil {
		return err
	}
	if err := os.Rename(path+tmpSuffix, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// readCheckpoint returns the entries of dir/name, each with fields
// integers. A missing file is os.ErrNotExist; anything malformed is
// errCheckpointCorrupt.
func readCheckpoint(dir, name string, fields int) ([][]int64, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	corrupt := fmt.Errorf("%w: %s", errCheckpointCorrupt, name)
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() ([]int64, bool) {
		if !sc.Scan() {
			return nil, false
		}
		var out []int64
		for _, f := range strings.Fields(sc.Text()) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	}
	version, ok1 := line()
	count, ok2 := line()
	if !ok1 || !ok2 || len(version) != 1 || version[0] != checkpointVersion || len(count) != 1 || count[0] < 0 {
		return nil, corrupt
	}
	var entries [][]int64
	for range count[0] {
		e, ok := line()
		if !ok || len(e) != fields {
			return nil, corrupt
		}
		entries = append(entries, e)
	}
	if sc.Scan() {
		return nil, corrupt
	}
	return entries, nil
}

// writeOffsetCheckpoint stores a single offset.
func writeOffsetCheckpoint(dir, name string, off int64) error {
	return writeCheckpoint(dir, name, [][]int64{{off}})
}

// readOffsetCheckpoint reads a single offset; ok is false when the file is
// missing or unreadable.
func readOffsetCheckpoint(dir, name string) (off int64, ok bool) {
	e, err := readCheckpoint(dir, name, 1)
	if err != nil || len(e) != 1 || e[0][0] < 0 {
		return 0, false
	}
	return e[0][0], true
}

// fsync is the one place the package asks for durability; fuzz tests,
// which do not simulate power loss, swap it for a no-op to run faster, and
// tests of a failing disk swap it for one that fails, as a failing fsync
// cannot be produced for real without a faulty device.
var fsync = (*os.File).Sync

// errSyncFailed marks the error of a failed fsync, which fails the log
// (Log.Err) for good: Linux reports a writeback error to one fsync only
// and may drop the dirty pages, so a later fsync that succeeds proves
// nothing about the earlier data (PostgreSQL's "fsyncgate").
var errSyncFailed = errors.New("fsync failed")

// syncOpenFile fsyncs an open file; a failure wraps errSyncFailed.
func syncOpenFile(f *os.File) error {
	if err := fsync(f); err != nil {
		return fmt.Errorf("%w: %s: %w", errSyncFailed, f.Name(), err)
	}
	return nil
}

// SyncDir fsyncs a directory so that the entries created, renamed and
// removed in it survive a crash: the parent of the directories Create made.
func SyncDir(dir string) error { return syncDir(dir) }

// syncDir fsyncs a directory so that created, renamed and removed entries
// survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = syncOpenFile(d)
	if e := d.Close(); err == nil {
		err = e
	}
	return err
}
