package storage

import (
	"fmt"
	"io"
	"os"
)

// batchScanner walks the whole batches of a segment file between two byte
// positions, reading the file in chunks that grow from minChunk to maxChunk
// so that a short read stays cheap and a long one makes few system calls.
//
// With reuse set, the chunk buffer is recycled and a returned batch is valid
// only until the next call; without it every chunk is a fresh allocation, so
// records decoded from returned batches may be kept.
type batchScanner struct {
	f        *os.File
	pos, end int64 // next batch position; stop here
	buf      []byte
	bufPos   int64 // file position of buf[0]
	chunk    int
	maxChunk int
	reuse    bool
	// alloc, when set, gives the chunk buffers of a scan without reuse
	// (ReadRawWith); otherwise they are made.
	alloc func(n int) []byte
}

const (
	minReadChunk = 16 << 10
	maxReadChunk = 4 << 20
)

// newBatchScanner scans [pos, end) of f; the first read is about chunk
// bytes (what the caller expects to need), later ones double up to
// maxReadChunk.
func newBatchScanner(f *os.File, pos, end int64, chunk int, reuse bool) *batchScanner {
	chunk = min(max(chunk, minReadChunk), maxReadChunk)
	return &batchScanner{f: f, pos: pos, end: end, chunk: chunk, maxChunk: max(chunk, 1<<20), reuse: reuse}
}

// next returns the position, header and bytes of the next batch, io.EOF at
// the end, or an error wrapping ErrCorrupt for a torn batch or a header that
// cannot be right. The CRC is not checked here.
func (s *batchScanner) next() (int64, BatchHeader, []byte, error) {
	pos := s.pos
	if pos >= s.end {
		return pos, BatchHeader{}, nil, io.EOF
	}
	if s.end-pos < BatchHeaderSize {
		return pos, BatchHeader{}, nil, fmt.Errorf("%w: torn batch header at byte %d", ErrCorrupt, pos)
	}
	b, err := s.fill(BatchHeaderSize)
	if err != nil {
		return pos, BatchHeader{}, nil, err
	}
	h, err := ParseBatchHeader(b)
	if err != nil {
		return pos, h, nil, fmt.Errorf("byte %d: %w", pos, err)
	}
	size := h.Size()
	if int64(size) > s.end-pos {
		return pos, h, nil, fmt.Errorf("%w: torn batch at byte %d: %d bytes, %d left", ErrCorrupt, pos, size, s.end-pos)
	}
	if b, err = s.fill(size); err != nil {
		return pos, h, nil, err
	}
	s.pos += int64(size)
	// The capacity runs on to the end of the chunk so that a caller can
	// tell that two batches lie side by side (see ReadRaw).
	return pos, h, b[:size], nil
}

// fill makes at least n bytes from s.pos available and returns them.
func (s *batchScanner) fill(n int) ([]byte, error) {
	off := s.pos - s.bufPos
	if s.buf != nil && off >= 0 && off+int64(n) <= int64(len(s.buf)) {
		return s.buf[off:], nil
	}
	size := int(min(int64(max(s.chunk, n)), s.end-s.pos))
	switch {
	case s.reuse && cap(s.buf) >= size:
		s.buf = s.buf[:size]
	case s.alloc != nil:
		s.buf = s.alloc(size)[:size]
	default:
		s.buf = make([]byte, size)
	}
	if _, err := s.f.ReadAt(s.buf, s.pos); err != nil {
		s.buf = nil
		return nil, fmt.Errorf("storage: read %s at %d: %w", s.f.Name(), s.pos, err)
	}
	s.bufPos = s.pos
	s.chunk = min(s.chunk*2, s.maxChunk)
	return s.buf, nil
}
