package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestFlushMessages(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Config{FlushMessages: 10})
	defer l.Close()
	appendRange(t, l, 0, 9, 3, 0)
	if !l.active().unsynced {
		t.Fatal("fsynced before flush.messages was reached")
	}
	appendRange(t, l, 9, 10, 1, 0)
	if l.active().unsynced || l.unflushed != 0 {
		t.Fatal("not fsynced after flush.messages")
	}
}

func TestFlushMs(t *testing.T) {
	l := mustOpen(t, t.TempDir(), Config{FlushMs: 10 * time.Millisecond})
	defer l.Close()
	appendRange(t, l, 0, 5, 5, 0)
	deadline := time.Now().Add(2 * time.Second)
	for {
		l.writeMu.Lock()
		synced := !l.active().unsynced
		l.writeMu.Unlock()
		if synced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("flush.ms never fsynced the segment")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDefaultPolicyDoesNotFsyncAppends(t *testing.T) {
	l := mustOpen(t, t.TempDir(), DefaultConfig())
	defer l.Close()
	appendRange(t, l, 0, 100, 10, 0)
	if !l.active().unsynced || l.flushTimer != nil {
		t.Fatal("default policy fsynced or scheduled an fsync")
	}
	if err := l.Flush(); err != nil || l.active().unsynced || l.recoveryPoint != 100 {
		t.Fatalf("Flush: %v, recovery point %d", err, l.recoveryPoint)
	}
	if rp, ok := readOffsetCheckpoint(l.dir, recoveryPointFile); !ok || rp != 100 {
		t.Fatalf("recovery-point checkpoint %d %v", rp, ok)
	}
}

// TestRollSyncsInBackground checks that the recovery point follows rolled
// segments once their background fsync is done, and is checkpointed.
func TestRollSyncsInBackground(t *testing.T) {
	defer func(old time.Duration) { checkpointInterval = old }(checkpointInterval)
	checkpointInterval = 0
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 300, 5, 0)
	l.writeMu.Lock()
	l.stopSyncer() // waits for the queued syncs
	active := l.active().base
	l.writeMu.Unlock()
	l.rpMu.Lock()
	rp := l.recoveryPoint
	l.rpMu.Unlock()
	if rp != active {
		t.Fatalf("recovery point %d, active segment starts at %d", rp, active)
	}
	if got, ok := readOffsetCheckpoint(dir, recoveryPointFile); !ok || got != active {
		t.Fatalf("checkpoint %d %v, want %d", got, ok, active)
	}
	// Appends after the syncer stopped start it again.
	appendRange(t, l, 300, 400, 5, 0)
}

// TestTruncationVoidsQueuedSync holds a background sync until after a
// truncation: it must not move the recovery point past the cut.
func TestTruncationVoidsQueuedSync(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	appendRange(t, l, 0, 40, 5, 0)
	segs := l.SegmentCount()
	l.rpMu.Lock()
	rp := l.recoveryPoint
	for l.SegmentCount() == segs {
		appendRange(t, l, l.LogEndOffset(), l.LogEndOffset()+5, 5, 0)
	}
	l.cutting()
	l.rpMu.Unlock()
	l.writeMu.Lock()
	l.stopSyncer()
	l.writeMu.Unlock()
	l.rpMu.Lock()
	defer l.rpMu.Unlock()
	if l.recoveryPoint != rp {
		t.Fatalf("recovery point moved from %d to %d after a truncation", rp, l.recoveryPoint)
	}
}

// failLogSync makes the first fsync of a segment .log file other than
// accept's fail with EIO, and every other fsync succeed, as a disk does
// whose writeback of one file failed once: Linux reports the error to one
// fsync and the next one succeeds, whether or not the data reached the
// disk. The failing fsync returns once release is closed (nil: at once).
// It returns the name of the file whose fsync failed.
func failLogSync(t *testing.T, accept func(name string) bool, release <-chan struct{}) *atomic.Pointer[string] {
	var failed atomic.Pointer[string]
	old := fsync
	t.Cleanup(func() { fsync = old })
	fsync = func(f *os.File) error {
		name := f.Name()
		if strings.HasSuffix(name, logSuffix) && !accept(name) && failed.CompareAndSwap(nil, &name) {
			if release != nil {
				<-release
			}
			return syscall.EIO
		}
		return old(f)
	}
	return &failed
}

// A failed background fsync of a rolled segment fails the log for good
// (fsyncgate): the recovery point stays below the segment even though the
// fsyncs of later segments succeed, every write and Flush is refused, and
// Close leaves no clean-shutdown marker. Opened again, the log is checked
// from that point, so the part of the segment that never reached the disk
// (zeros here) cuts the log instead of being trusted.
func TestFailedBackgroundFsyncFailsTheLog(t *testing.T) {
	defer func(old time.Duration) { checkpointInterval = old }(checkpointInterval)
	checkpointInterval = 0
	dir := t.TempDir()
	first := segmentPath(dir, 0, logSuffix)
	release := make(chan struct{})
	failed := failLogSync(t, func(name string) bool { return name == first }, release)
	l := mustOpen(t, dir, smallConfig())
	appendRange(t, l, 0, 300, 5, 0) // the syncer waits in the failing fsync meanwhile
	close(release)
	l.writeMu.Lock()
	l.stopSyncer() // every queued sync has run
	l.writeMu.Unlock()
	if failed.Load() == nil {
		t.Fatal("no segment fsync failed; the test needs at least three segments")
	}
	var lost int64
	for _, s := range l.segs {
		if s.log.Name() == *failed.Load() {
			lost = s.base
		}
	}
	if lost == 0 || lost >= l.active().base {
		t.Fatalf("the failed segment starts at %d, the active one at %d", lost, l.active().base)
	}

	if err := l.Err(); !errors.Is(err, ErrLogFailed) || !errors.Is(err, syscall.EIO) {
		t.Errorf("Err after a failed fsync = %v, want ErrLogFailed wrapping EIO", err)
	}
	if _, _, err := l.Append([]Record{rec(300)}, 0); !errors.Is(err, ErrLogFailed) {
		t.Errorf("Append after a failed fsync: %v, want ErrLogFailed", err)
	}
	if err := l.Flush(); !errors.Is(err, ErrLogFailed) {
		t.Errorf("Flush after a failed fsync: %v, want ErrLogFailed", err)
	}
	for _, op := range []func() error{
		func() error { _, err := l.AppendRaw(nil); return err },
		func() error { return l.Truncate(10) },
		func() error { return l.DeleteRecordsBefore(10) },
		func() error { _, err := l.ApplyRetention(time.Now(), 300); return err },
		func() error { return l.AssignEpoch(9) },
	} {
		if err := op(); !errors.Is(err, ErrLogFailed) {
			t.Errorf("a write after a failed fsync: %v, want ErrLogFailed", err)
		}
	}
	if rp, ok := readOffsetCheckpoint(dir, recoveryPointFile); !ok || rp != lost {
		t.Errorf("recovery-point checkpoint %d (%v), want %d: the start of the segment whose fsync failed", rp, ok, lost)
	}
	if err := l.Close(); !errors.Is(err, ErrLogFailed) {
		t.Errorf("Close of a failed log: %v, want ErrLogFailed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed log left a clean-shutdown marker: %v", err)
	}

	// The second half of the failed segment never reached the disk.
	f, err := os.OpenFile(segmentPath(dir, lost, logSuffix), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	half := info.Size() / 2
	if _, err := f.WriteAt(make([]byte, info.Size()-half), half); err != nil {
		t.Fatal(err)
	}
	f.Close()
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if l.Err() != nil {
		t.Fatalf("a reopened log is failed: %v", l.Err())
	}
	end := l.LogEndOffset()
	if end <= lost || end >= 300 || l.active().base != lost {
		t.Fatalf("reopened log ends at %d in the segment at %d; want it cut inside the segment at %d", end, l.active().base, lost)
	}
	checkRecords(t, readAll(t, l), 0, end)
	appendRange(t, l, end, end+5, 5, 0)
}

// An fsync that flush.messages asks for fails the log in the same way, and
// the append that asked for it reports it.
func TestFailedFlushMessagesFsyncFailsTheLog(t *testing.T) {
	failLogSync(t, func(string) bool { return false }, nil)
	l := mustOpen(t, t.TempDir(), Config{FlushMessages: 5})
	defer l.Close()
	appendRange(t, l, 0, 4, 4, 0)
	if _, _, err := l.Append([]Record{rec(4)}, 0); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("the append whose fsync failed: %v, want ErrLogFailed", err)
	}
	if _, _, err := l.Append([]Record{rec(5)}, 0); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("the next append: %v, want ErrLogFailed", err)
	}
	l.rpMu.Lock()
	rp := l.recoveryPoint
	l.rpMu.Unlock()
	if rp != 0 {
		t.Fatalf("recovery point %d after a failed fsync of the only segment, want 0", rp)
	}
}
