package storage

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
)

const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
)

// segment is one file of a partition log, named by the offset of its first
// batch, with its two sparse indexes.
//
// The single writer (holding Log.writeMu) appends past size and then
// publishes the new size, next offset and largest timestamp with atomic
// stores, so readers that load size first only ever read whole batches.
// Files are closed or removed only under the Log's exclusive lock.
type segment struct {
	base      int64
	dir       string
	log       *os.File
	index     *offsetIndex
	timeIndex *timeIndex
	recent    recentBatches

	size  atomic.Int64 // bytes of whole batches
	next  atomic.Int64 // offset after the last batch; base when empty
	maxTs atomic.Int64 // largest record timestamp; math.MinInt64 when empty

	// Writer state.
	bytesSinceIndex int
	rollBase        int64 // Unix ms from which segment.ms counts
	indexDirty      bool  // index files are behind the in-memory indexes
	indexUnsynced   bool  // index files written but not fsynced
	unsynced        bool  // log bytes written since the last fsync
}

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

// createSegment makes an empty segment, replacing any leftover files.
func createSegment(dir string, base int64) (*segment, error) {
	for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
		if err := os.Remove(segmentPath(dir, base, suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	f, err := os.OpenFile(segmentPath(dir, base, logSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	s := newSegment(dir, base, f)
	s.indexDirty = true
	return s, nil
}

// openSegment opens an existing segment's log. Its indexes are loaded by
// loadIndexes or rebuilt by recover before the segment is used.
func openSegment(dir string, base int64) (*segment, error) {
	f, err := os.OpenFile(segmentPath(dir, base, logSuffix), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return newSegment(dir, base, f), nil
}

func newSegment(dir string, base int64, f *os.File) *segment {
	s := &segment{base: base, dir: dir, log: f, index: newOffsetIndex(base), timeIndex: newTimeIndex(base)}
	s.next.Store(base)
	s.maxTs.Store(math.MinInt64)
	return s
}

// fits reports whether a batch ending at next can be indexed here.
func (s *segment) fits(next int64) bool { return next-s.base <= math.MaxUint32 }

// append writes whole, verified batches (their headers in hdrs) at the end
// of the segment with one write, indexes them and publishes them.
func (s *segment) append(data []byte, hdrs []BatchHeader, interval int) error {
	pos := s.size.Load()
	if _, err := s.log.WriteAt(data, pos); err != nil {
		// Readers never look past size; cut what may have landed so a
		// restart does not have to.
		_ = s.log.Truncate(pos)
		return fmt.Errorf("storage: append to %s: %w", s.log.Name(), err)
	}
	for _, h := range hdrs {
		s.indexBatch(pos, h, interval)
		s.recent.add(h.BaseOffset, pos)
		pos += int64(h.Size())
	}
	s.unsynced = true
	s.size.Store(pos)
	s.next.Store(hdrs[len(hdrs)-1].NextOffset())
	return nil
}

// indexBatch accounts for the batch h written at pos: the first batch and
// then one batch per interval bytes get an index entry, and a time index
// entry when the largest timestamp has grown.
func (s *segment) indexBatch(pos int64, h BatchHeader, interval int) {
	maxTs := max(s.maxTs.Load(), h.MaxTimestamp)
	if pos == 0 || s.bytesSinceIndex >= interval {
		s.index.append(h.BaseOffset, pos)
		s.bytesSinceIndex = 0
		if t, _, ok := s.timeIndex.last(); !ok || maxTs > t {
			s.timeIndex.append(maxTs, h.NextOffset())
		}
		s.indexDirty = true
	}
	s.bytesSinceIndex += h.Size()
	s.maxTs.Store(maxTs)
}

// closeTimeIndex adds the final time index entry (largest timestamp, next
// offset) that a sealed or cleanly closed segment always ends with.
func (s *segment) closeTimeIndex() {
	next := s.next.Load()
	if _, x, ok := s.timeIndex.last(); next == s.base || (ok && x >= next) {
		return
	}
	s.timeIndex.append(s.maxTs.Load(), next)
	s.indexDirty = true
}

// writeIndexes writes the in-memory indexes to their files if they have
// changed, without fsync.
func (s *segment) writeIndexes() error {
	if !s.indexDirty {
		return nil
	}
	if err := os.WriteFile(segmentPath(s.dir, s.base, indexSuffix), s.index.snapshot(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(segmentPath(s.dir, s.base, timeIndexSuffix), s.timeIndex.snapshot(), 0o644); err != nil {
		return err
	}
	s.indexDirty, s.indexUnsynced = false, true
	return nil
}

// flush writes the index files if they changed and fsyncs log and indexes.
func (s *segment) flush() error {
	if err := s.writeIndexes(); err != nil {
		return err
	}
	if s.indexUnsynced {
		for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
			if err := syncFile(segmentPath(s.dir, s.base, suffix)); err != nil {
				return err
			}
		}
		s.indexUnsynced = false
	}
	return s.syncLog()
}

// seal finishes a segment that will take no more appends: final time index
// entry, index files written, log fsynced. The index files are fsynced by
// the next Flush or Close; until then a crash may damage them, and Open's
// index checks rebuild them.
func (s *segment) seal() error {
	s.closeTimeIndex()
	if err := s.writeIndexes(); err != nil {
		return err
	}
	return s.syncLog()
}

// syncLog fsyncs the log file only; the indexes of the segment at the
// recovery point are rebuilt after a crash anyway.
func (s *segment) syncLog() error {
	if !s.unsynced {
		return nil
	}
	if err := syncOpenFile(s.log); err != nil {
		return err
	}
	s.unsynced = false
	return nil
}

// mapIndexes serves a sealed segment's indexes from their files.
func (s *segment) mapIndexes() {
	if s.indexDirty {
		return
	}
	s.index.mapFile(segmentPath(s.dir, s.base, indexSuffix))
	s.timeIndex.mapFile(segmentPath(s.dir, s.base, timeIndexSuffix))
}

func (s *segment) close() error {
	s.index.release()
	s.timeIndex.release()
	return s.log.Close()
}

// remove closes the segment and deletes its files, the log first so that
// a crash half-way leaves only index files, which Open discards.
func (s *segment) remove() error {
	err := s.close()
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if e := os.Remove(segmentPath(s.dir, s.base, suffix)); e != nil && !errors.Is(e, os.ErrNotExist) && err == nil {
			err = e
		}
	}
	return err
}

// syncFile fsyncs an existing file.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = syncOpenFile(f)
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// writeFileSync replaces path with data and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = syncOpenFile(f)
	}
	if e := f.Close(); err == nil {
		err = e
	}
	return err
}

// startOf returns where a scan for offset starts: the nearest known batch
// start at or below it, from the recent batches or the sparse index,
// below size.
func (s *segment) startOf(offset, size int64) int64 {
	pos := s.index.lookup(offset)
	if p, ok := s.recent.lookup(offset, size); ok && p > pos {
		pos = p
	}
	return pos
}
