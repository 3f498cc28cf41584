package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Directories written before batches became Kafka's RecordBatch v2 hold
// "format 1" batches: the same records behind a 46-byte header without
// magic, producer id, producer epoch and base sequence. Open converts such
// a directory once, before it loads it:
//
//  1. Every format 1 batch is rewritten as a v2 batch with the same base
//     offset, leader epoch, attributes, timestamps and record bytes, no
//     producer (-1, -1, -1) and a new CRC, into new segment files in the
//     staging directory .convert.tmp. A batch that fails its format 1
//     checks ends the log there, as crash recovery would have cut it.
//  2. The staging directory, fsynced, is renamed to .convert.ready with
//     a MANIFEST of the converted segments: the commit point.
//  3. The old index files and the segments the MANIFEST does not name are
//     deleted, the converted segments renamed over the old ones, the
//     log-format marker written and .convert.ready removed.
//
// A crash before step 2 leaves .convert.tmp, which the next Open deletes
// before converting again from the untouched old segments; a crash after
// it leaves .convert.ready, whose step 3 the next Open finishes (every
// part of it can be done twice). The converted segments have no index
// files, so loading rebuilds them and checks every batch.
//
// Conversion needs free space for one copy of the partition's log.
const (
	formatFile      = "log-format"
	formatV2        = "2"
	convertStaging  = ".convert.tmp"
	convertReady    = ".convert.ready"
	convertManifest = "MANIFEST"

	v1HeaderSize = 46
	// Byte positions of the format 1 header fields.
	v1PosLength      = 8
	v1PosEpoch       = 12
	v1PosCRC         = 16
	v1PosAttributes  = 20
	v1PosLastDelta   = 22
	v1PosFirstTs     = 26
	v1PosMaxTs       = 34
	v1PosRecordCount = 42
)

// convertStep, when set (by tests), is called before every step of a
// conversion that changes files; an error it returns stops the
// conversion there, as a crash would.
var convertStep func() error

func step() error {
	if convertStep != nil {
		return convertStep()
	}
	return nil
}

// ensureFormat makes sure the log in dir is in the current format,
// converting a format 1 log (see above). A directory without segments
// just gets the marker. The marker only saves looking at the segments:
// one that is missing or says anything but "2" (a damaged file) is
// written again once the segments have shown what they hold.
func ensureFormat(dir string) error {
	ready := filepath.Join(dir, convertReady)
	if _, err := os.Stat(ready); err == nil {
		return installConverted(dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, convertStaging)); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, formatFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if strings.TrimSpace(string(data)) == formatV2 {
		return nil
	}
	// No marker, or a damaged one: the segments tell.
	bases, err := listSegments(dir)
	if err != nil {
		return err
	}
	v1, err := holdsFormat1(dir, bases)
	if err != nil {
		return err
	}
	if v1 {
		if err := convertFormat1(dir, bases); err != nil {
			return fmt.Errorf("convert to record batch v2: %w", err)
		}
		return installConverted(dir)
	}
	return writeFormatMarker(dir)
}

// holdsFormat1 tells a format 1 log from one already in v2 whose marker
// is missing or damaged, by the first batch of each segment in turn until
// one passes the checks of either format: a format 1 header read as v2 has
// its CRC's first byte where the magic is and cannot pass the v2 CRC, nor
// a v2 batch the format 1 one. A log where no batch decides is loaded as
// v2, and recovery cuts it where it stops being readable.
func holdsFormat1(dir string, bases []int64) (bool, error) {
	for _, base := range bases {
		b, err := firstBatchBytes(segmentPath(dir, base, logSuffix))
		if err != nil {
			return false, err
		}
		if _, err := VerifyBatch(b); err == nil {
			return false, nil
		}
		if len(b) >= v1HeaderSize {
			if h, ok := parseV1Header(b); ok && h.Size() <= len(b) && verifyV1(b[:v1HeaderSize], b[v1HeaderSize:h.Size()], h) {
				return true, nil
			}
		}
	}
	return false, nil
}

// firstBatchBytes reads the start of a segment file: enough for its first
// batch if that is not huge.
func firstBatchBytes(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return b[:n], nil
}

// convertFormat1 writes the converted segments and the manifest into the
// staging directory and renames it to the ready one (steps 1 and 2).
func convertFormat1(dir string, bases []int64) error {
	return convertFormat1Limit(dir, bases, maxSegmentBytes)
}

// convertFormat1Limit is convertFormat1 with converted segments of at
// most limit bytes.
func convertFormat1Limit(dir string, bases []int64, limit int64) (err error) {
	staging := filepath.Join(dir, convertStaging)
	if err := step(); err != nil {
		return err
	}
	if err := os.Mkdir(staging, 0o755); err != nil {
		return err
	}
	w := &convertWriter{dir: staging, limit: limit}
	defer func() {
		if err != nil && w.f != nil {
			w.f.Close() // the next Open starts again without the staging files
		}
	}()
	next := int64(-1)
	for _, base := range bases {
		if base < next {
			continue // starts inside its predecessor: not part of this log (as load has it)
		}
		cut, end, err := w.convertSegment(segmentPath(dir, base, logSuffix), base)
		if err != nil {
			return err
		}
		if next = end; cut {
			break
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	var manifest strings.Builder
	for _, b := range w.written {
		fmt.Fprintf(&manifest, "%d\n", b)
	}
	if err := step(); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(staging, convertManifest), []byte(manifest.String())); err != nil {
		return err
	}
	if err := syncDir(staging); err != nil {
		return err
	}
	if err := step(); err != nil {
		return err
	}
	if err := os.Rename(staging, filepath.Join(dir, convertReady)); err != nil {
		return err
	}
	return syncDir(dir)
}

// installConverted replaces the old segments with the converted ones
// (step 3). Every step can be repeated after a crash.
func installConverted(dir string) error {
	ready := filepath.Join(dir, convertReady)
	data, err := os.ReadFile(filepath.Join(ready, convertManifest))
	if err != nil {
		return fmt.Errorf("converted segments: %w", err)
	}
	keep := map[int64]bool{}
	for _, line := range strings.Fields(string(data)) {
		b, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: converted segments' manifest: %q", ErrCorrupt, line)
		}
		keep[b] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		base, suffix, ok := parseSegmentName(e.Name())
		if ok && (suffix != logSuffix || !keep[base]) {
			if err := step(); err != nil {
				return err
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	staged, err := os.ReadDir(ready)
	if err != nil {
		return err
	}
	for _, e := range staged {
		if e.Name() == convertManifest {
			continue
		}
		if err := step(); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(ready, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := step(); err != nil {
		return err
	}
	if err := writeFormatMarker(dir); err != nil {
		return err
	}
	if err := step(); err != nil {
		return err
	}
	if err := os.RemoveAll(ready); err != nil {
		return err
	}
	return syncDir(dir)
}

// writeFormatMarker records that dir holds v2 batches.
func writeFormatMarker(dir string) error {
	path := filepath.Join(dir, formatFile)
	if err := writeFileSync(path+tmpSuffix, []byte(formatV2+"\n")); err != nil {
		return err
	}
	if err := os.Rename(path+tmpSuffix, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// convertWriter writes converted batches into segment files of the
// staging directory, starting a new one where a segment would grow past
// limit (maxSegmentBytes; each batch grows by 15 bytes).
type convertWriter struct {
	dir     string
	limit   int64
	f       *os.File
	w       *bufio.Writer
	size    int64
	written []int64 // base offsets of the segments written
	buf     []byte
}

// convertSegment converts the format 1 segment at path, whose first batch
// must have offset base. It stops at the first batch that fails the checks
// of format 1 (header, CRC, records, offsets continuing from base) and
// reports that as cut. It returns the offset after the last converted
// batch.
func (w *convertWriter) convertSegment(path string, base int64) (cut bool, next int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, 0, err
	}
	if err := w.start(base); err != nil {
		return false, 0, err
	}
	expect := base
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, fi.Size()), 1<<20)
	var hdr [v1HeaderSize]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err == io.EOF {
			return false, expect, nil
		} else if err != nil {
			return true, expect, nil // torn header
		}
		h, ok := parseV1Header(hdr[:])
		if !ok || h.BaseOffset != expect || int64(h.Size())-v1HeaderSize+BatchHeaderSize > maxSegmentBytes {
			return true, expect, nil
		}
		body := make([]byte, h.Size()-v1HeaderSize)
		if _, err := io.ReadFull(r, body); err != nil {
			return true, expect, nil // torn batch
		}
		if !verifyV1(hdr[:], body, h) {
			return true, expect, nil
		}
		if err := w.write(h, body); err != nil {
			return false, 0, err
		}
		expect = h.NextOffset()
	}
}

// start begins the staging segment for base.
func (w *convertWriter) start(base int64) error {
	if err := step(); err != nil {
		return err
	}
	if err := w.close(); err != nil {
		return err
	}
	f, err := os.OpenFile(segmentPath(w.dir, base, logSuffix), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	w.f, w.size = f, 0
	if w.w == nil {
		w.w = bufio.NewWriterSize(f, 1<<20)
	} else {
		w.w.Reset(f)
	}
	w.written = append(w.written, base)
	return nil
}

// write appends the v2 form of the format 1 batch h with records body.
func (w *convertWriter) write(h BatchHeader, body []byte) error {
	size := int64(BatchHeaderSize + len(body))
	if w.size > 0 && w.size+size > w.limit {
		if err := w.start(h.BaseOffset); err != nil {
			return err
		}
	}
	b := append(w.buf[:0], make([]byte, BatchHeaderSize)...)
	be := binary.BigEndian
	be.PutUint64(b[posBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[posLength:], uint32(size-lengthPrefix))
	be.PutUint32(b[posEpoch:], uint32(h.LeaderEpoch))
	b[posMagic] = Magic
	be.PutUint16(b[posAttributes:], uint16(h.Attributes))
	be.PutUint32(b[posLastDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[posFirstTs:], uint64(h.FirstTimestamp))
	be.PutUint64(b[posMaxTs:], uint64(h.MaxTimestamp))
	putProducer(b, NoProducerID, NoProducerEpoch, NoSequence)
	be.PutUint32(b[posRecordCount:], uint32(h.RecordCount))
	crc := crc32.Update(crc32.Checksum(b[posAttributes:], castagnoli), castagnoli, body)
	be.PutUint32(b[posCRC:], crc)
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	if _, err := w.w.Write(body); err != nil {
		return err
	}
	w.size += size
	return nil
}

// close finishes the current staging segment: flushed and fsynced.
func (w *convertWriter) close() error {
	if w.f == nil {
		return nil
	}
	err := w.w.Flush()
	if err == nil {
		err = syncOpenFile(w.f)
	}
	if e := w.f.Close(); err == nil {
		err = e
	}
	w.f = nil
	return err
}

// parseV1Header decodes a format 1 header into a BatchHeader (Length and
// so Size are format 1's) and checks what ParseBatchHeader checks.
func parseV1Header(b []byte) (BatchHeader, bool) {
	be := binary.BigEndian
	h := BatchHeader{
		BaseOffset:      int64(be.Uint64(b[posBaseOffset:])),
		Length:          int32(be.Uint32(b[v1PosLength:])),
		LeaderEpoch:     int32(be.Uint32(b[v1PosEpoch:])),
		Magic:           Magic,
		CRC:             be.Uint32(b[v1PosCRC:]),
		Attributes:      int16(be.Uint16(b[v1PosAttributes:])),
		LastOffsetDelta: int32(be.Uint32(b[v1PosLastDelta:])),
		FirstTimestamp:  int64(be.Uint64(b[v1PosFirstTs:])),
		MaxTimestamp:    int64(be.Uint64(b[v1PosMaxTs:])),
		ProducerID:      NoProducerID,
		ProducerEpoch:   NoProducerEpoch,
		BaseSequence:    NoSequence,
		RecordCount:     int32(be.Uint32(b[v1PosRecordCount:])),
	}
	ok := h.BaseOffset >= 0 &&
		int64(h.Length) >= v1HeaderSize-lengthPrefix+minRecordSize &&
		int64(h.Length) <= maxSegmentBytes &&
		h.RecordCount >= 1 && h.LastOffsetDelta >= 0 && h.RecordCount-1 <= h.LastOffsetDelta &&
		int64(h.RecordCount)*minRecordSize <= int64(h.Length) &&
		h.BaseOffset <= int64(^uint64(0)>>1)-int64(h.LastOffsetDelta)-1 &&
		h.Attributes == 0 // format 1 had no compression and no other attributes
	return h, ok
}

// verifyV1 checks a format 1 batch's CRC (over [attributes, end) of its
// own layout) and its records.
func verifyV1(hdr, body []byte, h BatchHeader) bool {
	crc := crc32.Update(crc32.Checksum(hdr[v1PosAttributes:], castagnoli), castagnoli, body)
	if crc != h.CRC {
		return false
	}
	var d recordDecoder
	d.reset(body, h)
	for d.more() {
		if _, err := d.next(false); err != nil {
			return false
		}
	}
	return d.finish() == nil
}
