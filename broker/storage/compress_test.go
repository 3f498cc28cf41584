package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var codecs = []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// TestCompressedAppendAndRead appends batches with every codec, reads
// them back record for record before and after a crash (whose recovery
// decompresses and checks every batch), and checks that the stored batch
// is compressed: its attributes name the codec and it is smaller than
// the records.
func TestCompressedAppendAndRead(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := mustOpen(t, dir, smallConfig())
			var want []Record
			for i, n := range []int{1, 30, 7, 100} {
				recs := kafkaRecords(n, 1_700_000_000_000+int64(i)*1000)
				for j := range recs {
					recs[j].Value = bytes.Repeat([]byte("compressible "), 20)
				}
				res, err := l.AppendRecords(recs, 0, BatchOptions{Compression: c})
				if err != nil {
					t.Fatal(err)
				}
				if res.LastOffset-res.BaseOffset != int64(n-1) {
					t.Fatalf("append of %d records = %+v", n, res)
				}
				want = append(want, recs...)
			}
			check := func(l *Log) {
				t.Helper()
				got := readAll(t, l)
				if len(got) != len(want) {
					t.Fatalf("%d records, want %d", len(got), len(want))
				}
				for i := range got {
					if got[i].Offset != int64(i) || !sameRecord(got[i], want[i]) {
						t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
					}
				}
			}
			check(l)
			raw, err := l.ReadRaw(0, -1, 0)
			if err != nil {
				t.Fatal(err)
			}
			for p := 0; p < len(raw); {
				var kb kmsg.RecordBatch
				if err := kb.ReadFrom(raw[p:]); err != nil {
					t.Fatal(err)
				}
				if kb.Attributes&7 != int16(c) {
					t.Fatalf("batch attributes %#x, want codec %d", kb.Attributes, c)
				}
				if min := int(kb.NumRecords) * 260; len(kb.Records) >= min {
					t.Fatalf("%d records stored in %d bytes: not compressed", kb.NumRecords, len(kb.Records))
				}
				p += int(kb.Length) + 12
			}
			crash(l)
			l = mustOpen(t, dir, smallConfig())
			defer l.Close()
			check(l)
			if ts, err := l.OffsetForTimestamp(1_700_000_002_000); err != nil || ts != 31 {
				t.Fatalf("OffsetForTimestamp = %d, %v; want 31", ts, err)
			}
		})
	}
}

// xerialFrame wraps snappy blocks of at most chunk bytes of src in the
// framing of the Java producer's snappy-java.
func xerialFrame(src []byte, chunk int) []byte {
	out := append([]byte(nil), xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(src) > 0 {
		n := min(chunk, len(src))
		block := snappy.Encode(nil, src[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		src = src[n:]
	}
	return out
}

// otherClients compress a records section the ways Kafka clients other
// than this broker do: snappy in xerial framing (Java), lz4 frames with
// the library's default 4 MiB blocks and content checksum, gzip in two
// members, zstd at its best level.
var otherClients = map[string]func(t *testing.T, src []byte) ([]byte, int16){
	"snappy-xerial": func(t *testing.T, src []byte) ([]byte, int16) { return xerialFrame(src, 100), 2 },
	"lz4-default-frame": func(t *testing.T, src []byte) ([]byte, int16) {
		var b bytes.Buffer
		w := lz4.NewWriter(&b)
		if _, err := w.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), 3
	},
	"gzip-two-members": func(t *testing.T, src []byte) ([]byte, int16) {
		var b bytes.Buffer
		for _, part := range [][]byte{src[:len(src)/2], src[len(src)/2:]} {
			w := gzip.NewWriter(&b)
			if _, err := w.Write(part); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes(), 1
	},
	"zstd-best": func(t *testing.T, src []byte) ([]byte, int16) {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		return e.EncodeAll(src, nil), 4
	},
}

// TestOtherClientsCompressedBatches stores batches kmsg encoded with
// records compressed as other clients compress them, and reads them back.
func TestOtherClientsCompressedBatches(t *testing.T) {
	for name, comp := range otherClients {
		t.Run(name, func(t *testing.T) {
			l := mustOpen(t, t.TempDir(), smallConfig())
			defer l.Close()
			recs := kafkaRecords(50, 1_650_000_000_000)
			b := kmsgEncode(t, 0, 1, recs, -1, -1, -1, func(src []byte) ([]byte, int16) { return comp(t, src) })
			if _, err := l.AppendRaw(b); err != nil {
				t.Fatalf("AppendRaw: %v", err)
			}
			got := readAll(t, l)
			if len(got) != len(recs) {
				t.Fatalf("%d records, want %d", len(got), len(recs))
			}
			for i := range got {
				if !sameRecord(got[i], recs[i]) {
					t.Fatalf("record %d = %+v, want %+v", i, got[i], recs[i])
				}
			}
		})
	}
}

// bomb is a records section of n zero bytes compressed with c: tiny, and
// n bytes once decompressed.
func bomb(t *testing.T, c Compression, n int) []byte {
	t.Helper()
	b, err := compress(nil, c, make([]byte, n))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecompressIsBounded: data that expands past the limit is refused
// with ErrBatchTooLarge having cost about the limit in memory, and
// malformed data is ErrCorrupt, for every codec.
func TestDecompressIsBounded(t *testing.T) {
	const limit = 1 << 20
	for _, c := range codecs {
		t.Run(c.String(), func(t *testing.T) {
			src := bomb(t, c, 256<<20)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := decompress(nil, c, src, limit)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrBatchTooLarge) {
				t.Fatalf("%d compressed bytes of 256 MiB: %v, want ErrBatchTooLarge", len(src), err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*limit {
				t.Fatalf("refusing a 256 MiB bomb allocated %d bytes", alloc)
			}
			if out, err := decompress(nil, c, bomb(t, c, limit), limit); err != nil || len(out) != limit {
				t.Fatalf("exactly the limit: %d bytes, %v", len(out), err)
			}
			good := bomb(t, c, 5000)
			for name, bad := range map[string][]byte{
				"truncated": good[:len(good)/2],
				"garbage":   bytes.Repeat([]byte{0xA5}, 300),
			} {
				if _, err := decompress(nil, c, bad, limit); !errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: %v, want ErrCorrupt", name, err)
				}
			}
		})
	}
}

// TestSnappyLengthsAreChecked: a snappy block or xerial chunk whose
// lengths lie is refused before its claimed size is allocated.
func TestSnappyLengthsAreChecked(t *testing.T) {
	huge := binary.AppendUvarint(nil, 1<<31) // a block claiming 2 GiB
	huge = append(huge, 0, 0, 0)
	if _, err := decompress(nil, CompressionSnappy, huge, 1<<20); !errors.Is(err, ErrBatchTooLarge) {
		t.Errorf("block claiming 2 GiB: %v", err)
	}
	framed := xerialFrame([]byte("some records"), 100)
	binary.BigEndian.PutUint32(framed[16:], 1<<30) // chunk longer than the data
	if _, err := decompress(nil, CompressionSnappy, framed, 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Errorf("chunk length past the end: %v", err)
	}
	if _, err := decompress(nil, CompressionSnappy, framed[:12], 1<<20); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short xerial header: %v", err)
	}
	many := xerialFrame(make([]byte, 3<<20), 64<<10) // chunks adding up past the limit
	if _, err := decompress(nil, CompressionSnappy, many, 1<<20); !errors.Is(err, ErrBatchTooLarge) {
		t.Errorf("chunks past the limit: %v", err)
	}
}

// TestCompressedBatchDamage: a compressed batch whose records do not match
// its header is corrupt, as an uncompressed one is.
func TestCompressedBatchDamage(t *testing.T) {
	recs := kafkaRecords(10, 1000)
	for _, c := range codecs {
		var e batchEncoder
		good, _, err := e.encode(nil, 0, 0, recs, 0, BatchOptions{Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		if _, got, err := DecodeBatch(good); err != nil || len(got) != 10 {
			t.Fatalf("%v: %d records, %v", c, len(got), err)
		}
		for name, mutate := range map[string]func(b []byte){
			"count":         func(b []byte) { binary.BigEndian.PutUint32(b[posRecordCount:], 9) },
			"codec":         func(b []byte) { b[posAttributes+1] = byte(c%4 + 1) },
			"unknown codec": func(b []byte) { b[posAttributes+1] = 6 },
			"data":          func(b []byte) { b[len(b)-3] ^= 0xff },
		} {
			b := append([]byte(nil), good...)
			mutate(b)
			binary.BigEndian.PutUint32(b[posCRC:], crc32c(b[posAttributes:]))
			if _, err := VerifyBatch(b); !errors.Is(err, ErrCorrupt) && !(name == "data" && err == nil) {
				t.Errorf("%v, %s: %v, want ErrCorrupt", c, name, err)
			}
		}
	}
}

func TestParseCompression(t *testing.T) {
	for name, want := range map[string]Compression{"uncompressed": 0, "none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4} {
		if c, ok := ParseCompression(name); !ok || c != want {
			t.Errorf("ParseCompression(%q) = %v, %v", name, c, ok)
		}
	}
	for _, bad := range []string{"producer", "LZ4", "", "brotli"} {
		if _, ok := ParseCompression(bad); ok {
			t.Errorf("ParseCompression(%q) accepted", bad)
		}
	}
	if got := fmt.Sprint(CompressionZstd, Compression(7)); got != "zstd compression(7)" {
		t.Errorf("String: %s", got)
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// TestDecompressIntoAUsedBuffer: decompressing into a buffer that held
// other bytes (the scratch buffer a replica reuses) gives exactly the
// records, for every codec and both snappy framings, whether the buffer
// is large enough or must grow.
func TestDecompressIntoAUsedBuffer(t *testing.T) {
	want := bytes.Repeat([]byte("records that compress "), 500)
	for _, c := range codecs {
		src, err := compress(nil, c, want)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{2 * len(want), len(want), len(want) / 2} {
			used := bytes.Repeat([]byte{0xA5}, size)
			got, err := decompress(used[:0], c, src, 1<<20)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%v into a used buffer of %d bytes: %d bytes, %v", c, size, len(got), err)
			}
		}
	}
	framed := xerialFrame(want, 1000)
	used := bytes.Repeat([]byte{0xA5}, 2*len(want))
	if got, err := decompress(used[:0], CompressionSnappy, framed, 1<<20); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("xerial chunks into a used buffer: %d bytes, %v", len(got), err)
	}
}
