package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Open opens the log in dir, creating the directory if it is missing, and
// brings it to a consistent state. A directory written before batches were
// Kafka's v2 is converted first (convert.go).
//
// After a clean shutdown the index files are trusted once they pass their
// checks, and only the tail of each segment past its last index entry is
// read (with CRCs for the last segment). After a crash every segment from
// the one holding the recovery point onwards is read batch by batch; the
// log is cut at the first torn, corrupt or out-of-sequence batch and any
// later segments are deleted. A missing, short or inconsistent index is
// rebuilt the same way in any segment.
func Open(dir string, cfg Config) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := ensureFormat(dir); err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	l := &Log{dir: dir}
	l.SetConfig(cfg)
	if err := l.load(); err != nil {
		for _, s := range l.segs {
			_ = s.close()
		}
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	return l, nil
}

func (l *Log) load() error {
	cfg := l.Config()
	bases, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(l.dir, cleanShutdownFile))
	clean := err == nil
	rp, _ := readOffsetCheckpoint(l.dir, recoveryPointFile)
	logStart, _ := readOffsetCheckpoint(l.dir, logStartOffsetFile)
	epochs, epochsOK := loadEpochCache(l.dir)
	l.epochs = epochs

	// Segments from the one holding the recovery point on are scanned
	// after a crash; a clean shutdown needs no scan.
	recoverFrom := int64(math.MaxInt64)
	if !clean {
		recoverFrom = 0
		for _, b := range bases {
			if b <= rp {
				recoverFrom = b
			}
		}
	}
	l.recoveryPoint, l.checkpointedRP = rp, rp
	var scanned []*segment // recovered or index-completed, to be made durable
	for i, base := range bases {
		if n := len(l.segs); n > 0 && base < l.segs[n-1].next.Load() {
			// Starts inside its predecessor, so it cannot belong to this
			// log (a segment whose deletion failed, for instance).
			if err := l.dropFiles(bases[i : i+1]); err != nil {
				return err
			}
			continue
		}
		s, err := openSegment(l.dir, base)
		if err != nil {
			return err
		}
		l.segs = append(l.segs, s)
		cut, err := l.loadSegment(s, base >= recoverFrom, cfg)
		if err != nil {
			return err
		}
		if s.indexDirty || s.unsynced {
			scanned = append(scanned, s)
		}
		if cut {
			if err := l.dropFiles(bases[i+1:]); err != nil {
				return err
			}
			break
		}
	}
	// The last segment's tail is where a torn or corrupt write would be
	// even after a clean shutdown, so its CRCs are checked in any case.
	if n := len(l.segs); n > 0 && !slices.Contains(scanned, l.segs[n-1]) {
		if err := l.segs[n-1].verifyTail(cfg.storedLimit()); errors.Is(err, ErrCorrupt) || errors.Is(err, ErrBatchTooLarge) {
			if _, err := l.segs[n-1].recover(cfg.IndexIntervalBytes, cfg.storedLimit(), nil); err != nil {
				return err
			}
			scanned = append(scanned, l.segs[n-1])
		} else if err != nil {
			return err
		}
	}
	if err := l.settleSegments(logStart); err != nil {
		return err
	}
	if !epochsOK {
		if err := l.rebuildEpochs(); err != nil {
			return err
		}
	}
	cutEnd := l.epochs.truncateFromEnd(l.leo.Load())
	cutStart := l.epochs.truncateFromStart(l.logStart.Load())
	if !epochsOK || cutEnd || cutStart {
		if err := l.epochs.persist(l.dir); err != nil {
			return err
		}
	}
	for _, s := range scanned {
		if s != l.active() && slices.Contains(l.segs, s) {
			if err := s.seal(); err != nil {
				return err
			}
		}
	}
	for _, s := range l.segs[:len(l.segs)-1] {
		s.mapIndexes()
	}
	if err := l.active().syncLog(); err != nil {
		return err
	}
	if err := l.setRecoveryPoint(l.leo.Load()); err != nil {
		return err
	}
	if err := l.loadProducers(cfg, time.Now()); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(l.dir, cleanShutdownFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return syncDir(l.dir)
}

// loadSegment trusts s's indexes when it can and recovers s otherwise; it
// reports whether the log was cut inside s.
func (l *Log) loadSegment(s *segment, recover bool, cfg Config) (cut bool, err error) {
	if !recover {
		err := s.loadIndexes(cfg.IndexIntervalBytes)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, errIndexCorrupt) && !errors.Is(err, ErrCorrupt) {
			return false, err
		}
	}
	return s.recover(cfg.IndexIntervalBytes, cfg.storedLimit(), nil)
}

// settleSegments removes segments that hold nothing readable, makes sure an
// active segment exists at the log end offset and sets the offsets.
func (l *Log) settleSegments(logStart int64) error {
	keep := l.segs[:0]
	for i, s := range l.segs {
		last := i == len(l.segs)-1
		empty := s.size.Load() == 0
		belowStart := !last && l.segs[i+1].base <= logStart
		if (empty && !last) || belowStart {
			if err := s.remove(); err != nil {
				return err
			}
			continue
		}
		keep = append(keep, s)
	}
	l.segs = keep
	// An empty active segment must start where its predecessor ends.
	if n := len(l.segs); n > 1 && l.segs[n-1].size.Load() == 0 && l.segs[n-1].base != l.segs[n-2].next.Load() {
		if err := l.segs[n-1].remove(); err != nil {
			return err
		}
		l.segs = l.segs[:n-1]
	}
	if len(l.segs) == 0 {
		s, err := createSegment(l.dir, logStart)
		if err != nil {
			return err
		}
		l.segs = append(l.segs, s)
	}
	leo := l.active().next.Load()
	start := max(logStart, l.segs[0].base)
	if start > leo {
		// The checkpointed start is past what survived: nothing below it
		// may be served, so begin again there.
		for _, s := range l.segs {
			if err := s.remove(); err != nil {
				return err
			}
		}
		s, err := createSegment(l.dir, start)
		if err != nil {
			return err
		}
		l.segs = []*segment{s}
		leo = start
	}
	l.leo.Store(leo)
	l.logStart.Store(start)
	if start == logStart {
		return nil
	}
	return writeOffsetCheckpoint(l.dir, logStartOffsetFile, start)
}

// rebuildEpochs recreates a lost leader-epoch checkpoint from the epochs
// stamped in the batch headers. Only batches whose CRC passes are
// believed; a segment is read up to its first bad batch, whose damage
// reads will report.
func (l *Log) rebuildEpochs() error {
	l.epochs = newEpochCache()
	for _, s := range l.segs {
		sc := newBatchScanner(s.log, 0, s.size.Load(), maxReadChunk, true)
		for {
			_, h, b, err := sc.next()
			if err == io.EOF || errors.Is(err, ErrCorrupt) {
				break
			}
			if err != nil {
				return err
			}
			if checkCRC(b, h) != nil {
				break
			}
			l.epochs.assign(h.LeaderEpoch, h.BaseOffset)
		}
	}
	return nil
}
