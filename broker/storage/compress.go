package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Compression is the codec of a batch's records: bits 0–2 of its
// attributes, with Kafka's numbers. The header stays uncompressed; the
// records section after it is one compressed stream.
type Compression int8

// The codecs, as Kafka numbers them.
const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

var compressionNames = map[Compression]string{
	CompressionNone: "none", CompressionGzip: "gzip", CompressionSnappy: "snappy",
	CompressionLZ4: "lz4", CompressionZstd: "zstd",
}

func (c Compression) String() string {
	if n, ok := compressionNames[c]; ok {
		return n
	}
	return fmt.Sprintf("compression(%d)", int8(c))
}

// ParseCompression reads a codec name as Kafka's compression.type spells
// it: uncompressed (or none), gzip, snappy, lz4, zstd.
func ParseCompression(name string) (Compression, bool) {
	if name == "uncompressed" {
		return CompressionNone, true
	}
	for c, n := range compressionNames {
		if n == name {
			return c, true
		}
	}
	return 0, false
}

// valid reports a codec this package reads and writes.
func (c Compression) valid() bool { return c >= CompressionNone && c <= CompressionZstd }

// Compression returns the codec of the batch's records.
func (h BatchHeader) Compression() Compression { return Compression(h.Attributes & compressionMask) }

// Decompression is bounded: the output may not exceed a limit (for a
// produce, max.message.bytes less the header), and the codecs' own
// buffers are bounded too (zstd windows, lz4 blocks), so a small batch
// that claims or expands to gigabytes costs at most the limit before it
// is refused with ErrBatchTooLarge. Malformed compressed data is
// ErrCorrupt.

// maxZstdWindow bounds the memory a zstd frame may ask the decoder for.
// Kafka clients' frames use windows no larger than the batch (a few MiB
// at most); a frame that asks for more is refused as corrupt.
const maxZstdWindow = 64 << 20

var (
	gzipReaders sync.Pool // *gzip.Reader
	lz4Readers  = sync.Pool{New: func() any { return lz4.NewReader(nil) }}
	zstdReaders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow))
		if err != nil {
			panic(err) // the options are constant
		}
		return d
	}}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Writers  = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// Kafka's own LZ4 stream uses 64 KiB blocks; clients accept any.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.CompressionLevelOption(lz4.Fast)); err != nil {
			panic(err)
		}
		return w
	}}
	zstdEncoder = func() *zstd.Encoder {
		// EncodeAll may be called concurrently; the encoder keeps its
		// own pool of block encoders.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true), zstd.WithWindowSize(1<<20))
		if err != nil {
			panic(err)
		}
		return e
	}()
)

// xerialMagic starts a snappy stream in the framing of the xerial
// snappy-java library, which the Java Kafka producer writes: the magic,
// two int32 versions, then chunks of (int32 length, snappy block).
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// compress appends src compressed with c to dst.
func compress(dst []byte, c Compression, src []byte) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionSnappy:
		// A raw snappy block, as franz-go and librdkafka write it; every
		// Kafka client reads both framings.
		n := len(dst)
		dst = append(dst, make([]byte, snappy.MaxEncodedLen(len(src)))...)
		return dst[:n+len(snappy.Encode(dst[n:], src))], nil
	case CompressionZstd:
		return zstdEncoder.EncodeAll(src, dst), nil
	case CompressionGzip, CompressionLZ4:
		buf := bytes.NewBuffer(dst)
		var w interface {
			io.WriteCloser
			Reset(io.Writer)
		}
		if c == CompressionGzip {
			gw := gzipWriters.Get().(*gzip.Writer)
			defer gzipWriters.Put(gw)
			w = gw
		} else {
			lw := lz4Writers.Get().(*lz4.Writer)
			defer lz4Writers.Put(lw)
			w = lw
		}
		w.Reset(buf)
		if _, err := w.Write(src); err != nil {
			return dst, err
		}
		if err := w.Close(); err != nil {
			return dst, err
		}
		return buf.Bytes(), nil
	}
	return dst, fmt.Errorf("storage: cannot compress with %v", c)
}

// decompress appends the decompressed src to dst[:0]'s end, refusing more
// than limit bytes of output with ErrBatchTooLarge and malformed input
// with ErrCorrupt.
func decompress(dst []byte, c Compression, src []byte, limit int) ([]byte, error) {
	switch c {
	case CompressionNone:
		if len(src) > limit {
			return dst, fmt.Errorf("%w: %d bytes of records, limit %d", ErrBatchTooLarge, len(src), limit)
		}
		return append(dst, src...), nil
	case CompressionSnappy:
		return snappyDecode(dst, src, limit)
	case CompressionGzip:
		zr, _ := gzipReaders.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = zr.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return dst, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		defer gzipReaders.Put(zr)
		return readBounded(dst, zr, limit, c, len(src))
	case CompressionLZ4:
		zr := lz4Readers.Get().(*lz4.Reader)
		defer lz4Readers.Put(zr)
		zr.Reset(bytes.NewReader(src))
		return readBounded(dst, zr, limit, c, len(src))
	case CompressionZstd:
		zr := zstdReaders.Get().(*zstd.Decoder)
		defer zstdReaders.Put(zr)
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			return dst, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		out, err := readBounded(dst, zr, limit, c, len(src))
		// Drop the reference to src, which the pool would keep alive.
		_ = zr.Reset(nil)
		return out, err
	}
	return dst, fmt.Errorf("%w: unknown compression %d", ErrCorrupt, c)
}

// readBounded reads r to its end, appending to dst, and fails once more
// than limit bytes came out. The buffer starts at four times the
// compressed size (records compress about that well) and grows by
// doubling, so a batch that decompresses to little costs little.
func readBounded(dst []byte, r io.Reader, limit int, c Compression, compressed int) ([]byte, error) {
	start := len(dst)
	if want := min(max(4*compressed, 4096), limit+1); cap(dst)-start < want {
		dst = append(dst, make([]byte, want)...)[:start]
	}
	for {
		if len(dst) == cap(dst) {
			if len(dst)-start > limit {
				return dst[:start], fmt.Errorf("%w: %v records decompress to more than %d bytes", ErrBatchTooLarge, c, limit)
			}
			grow := min(cap(dst)-start, limit+1-(len(dst)-start))
			dst = append(dst, make([]byte, max(grow, 1))...)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst[:start], fmt.Errorf("%w: %v records decompress to more than %d bytes", ErrBatchTooLarge, c, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return dst[:start], fmt.Errorf("%w: %v: %v", ErrBatchTooLarge, c, err)
		}
		if err != nil {
			return dst[:start], fmt.Errorf("%w: %v: %v", ErrCorrupt, c, err)
		}
	}
}

// snappyDecode reads a raw snappy block or xerial-framed chunks. Each
// block's decoded length is read from its preamble and checked against
// what is left of limit before anything is allocated for it.
func snappyDecode(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	block := func(b []byte) error {
		n, err := snappy.DecodedLen(b)
		if err != nil {
			return fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		if n > limit-(len(dst)-start) {
			return fmt.Errorf("%w: snappy records decompress to more than %d bytes", ErrBatchTooLarge, limit)
		}
		at := len(dst)
		if cap(dst)-at >= n {
			// A reused buffer: snappy.Decode writes every byte of it, so
			// clearing it first (as append of make does) would be wasted.
			dst = dst[:at+n]
		} else {
			dst = append(dst, make([]byte, n)...)
		}
		out, err := snappy.Decode(dst[at:], b)
		if err != nil || len(out) != n {
			return fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		return nil
	}
	if !bytes.HasPrefix(src, xerialMagic) {
		if err := block(src); err != nil {
			return dst[:start], err
		}
		return dst, nil
	}
	const header = 16 // magic, version, compatible version
	if len(src) < header {
		return dst[:start], fmt.Errorf("%w: snappy: short xerial header", ErrCorrupt)
	}
	for p := header; p < len(src); {
		if len(src)-p < 4 {
			return dst[:start], fmt.Errorf("%w: snappy: torn xerial chunk", ErrCorrupt)
		}
		n := int(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if n < 0 || n > len(src)-p {
			return dst[:start], fmt.Errorf("%w: snappy: xerial chunk of %d bytes, %d left", ErrCorrupt, n, len(src)-p)
		}
		if err := block(src[p : p+n]); err != nil {
			return dst[:start], err
		}
		p += n
	}
	return dst, nil
}
