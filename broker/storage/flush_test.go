package storage

import (
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
