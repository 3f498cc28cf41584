package storage

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// Benchmarks use 100-byte values without keys, the default configuration
// (1 GiB segments, fsync left to the OS) unless named otherwise, and
// report records/s; MB/s counts the encoded bytes written or read.

func benchRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i].Value = make([]byte, 100)
		recs[i].Value[0] = byte(i)
	}
	return recs
}

func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchAppend(b, DefaultConfig(), n)
		})
	}
	// Comparable with dd conv=fdatasync: the closing fsync is timed.
	b.Run("records=1000/fsync-at-end", func(b *testing.B) {
		l := mustOpen(b, b.TempDir(), DefaultConfig())
		recs := benchRecords(1000)
		enc, _ := EncodeBatch(nil, 0, 0, recs)
		b.SetBytes(int64(len(enc)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := l.Append(recs, 0); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Flush(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
		closeUntimed(b, l)
	})
	b.Run("records=1/flush.messages=1", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.FlushMessages = 1
		benchAppend(b, cfg, 1)
	})
}

func benchAppend(b *testing.B, cfg Config, n int) {
	l := mustOpen(b, b.TempDir(), cfg)
	defer closeUntimed(b, l)
	recs := benchRecords(n)
	enc, _ := EncodeBatch(nil, 0, 0, recs)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := l.Append(recs, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
}

// closeUntimed closes l outside the timed region: Close fsyncs everything
// the benchmark wrote, which the default policy leaves to the OS.
func closeUntimed(b *testing.B, l *Log) {
	b.StopTimer()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// filledLog appends total records in batches of per.
func filledLog(b *testing.B, total, per int) *Log {
	l := mustOpen(b, b.TempDir(), DefaultConfig())
	recs := benchRecords(per)
	for i := 0; i < total; i += per {
		if _, _, err := l.Append(recs, 0); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

func BenchmarkReadSequential(b *testing.B) {
	for _, per := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", per), func(b *testing.B) {
			const total = 500_000
			l := filledLog(b, total, per)
			defer closeUntimed(b, l)
			b.SetBytes(l.Size() / total)
			b.ReportAllocs()
			b.ResetTimer()
			var off int64
			for read := 0; read < b.N; {
				if off >= l.LogEndOffset() {
					off = 0
				}
				got, err := l.Read(off, -1, 1<<20, 0)
				if err != nil || len(got) == 0 {
					b.Fatalf("Read(%d): %d, %v", off, len(got), err)
				}
				read += len(got)
				off = got[len(got)-1].Offset + 1
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkReadRawSequential(b *testing.B) {
	const total, per = 500_000, 100
	l := filledLog(b, total, per)
	defer closeUntimed(b, l)
	b.SetBytes(l.Size() / total)
	b.ResetTimer()
	var off int64
	for read := 0; read < b.N; {
		if off >= l.LogEndOffset() {
			off = 0
		}
		raw, err := l.ReadRaw(off, -1, 1<<20)
		if err != nil || len(raw) == 0 {
			b.Fatal(err)
		}
		n := int64(len(raw)) / (l.Size() / total)
		read += int(n)
		off += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkReadRandom(b *testing.B) {
	const total, per = 500_000, 100
	l := filledLog(b, total, per)
	defer closeUntimed(b, l)
	rng := rand.New(rand.NewSource(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := rng.Int63n(total)
		got, err := l.Read(off, -1, 0, 1)
		if err != nil || len(got) != 1 || got[0].Offset != off {
			b.Fatalf("Read(%d): %v", off, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// textRecords are records whose 100-byte values look like application
// events (JSON with varying ids and times), as compressible as such data
// is, rather than the zero-filled values of benchRecords.
func textRecords(n int) []Record {
	rng := rand.New(rand.NewSource(int64(n)))
	events := []string{"click", "view", "purchase", "login", "logout"}
	recs := make([]Record, n)
	for i := range recs {
		v := fmt.Sprintf(`{"user":%d,"event":%q,"ts":%d,"session":"%08x"}`, rng.Intn(100000), events[rng.Intn(len(events))],
			1_700_000_000_000+rng.Int63n(1_000_000), rng.Uint32())
		for len(v) < 100 {
			v += " "
		}
		recs[i].Value = []byte(v[:100])
	}
	return recs
}

// BenchmarkAppendCompressed appends batches of 100 and 1000 text records
// compressed with lz4 and zstd (none for comparison); MB/s counts the
// records uncompressed and "ratio" is uncompressed / stored bytes.
func BenchmarkAppendCompressed(b *testing.B) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionZstd} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("%v/records=%d", c, n), func(b *testing.B) {
				l := mustOpen(b, b.TempDir(), DefaultConfig())
				defer closeUntimed(b, l)
				recs := textRecords(n)
				raw, _ := EncodeBatch(nil, 0, 0, recs)
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := l.AppendRecords(recs, 0, BatchOptions{Compression: c}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(int64(b.N)*int64(len(raw)))/float64(l.Size()), "ratio")
			})
		}
	}
}

// BenchmarkReadCompressed reads a log of 100-record text batches
// compressed with lz4 and zstd sequentially, ≤ 1 MiB at a time, as a
// consumer's fetch does: every batch is decompressed.
func BenchmarkReadCompressed(b *testing.B) {
	for _, c := range []Compression{CompressionNone, CompressionLZ4, CompressionZstd} {
		b.Run(c.String(), func(b *testing.B) {
			const total, per = 200_000, 100
			l := mustOpen(b, b.TempDir(), DefaultConfig())
			defer closeUntimed(b, l)
			recs := textRecords(per)
			for i := 0; i < total; i += per {
				if _, err := l.AppendRecords(recs, 0, BatchOptions{Compression: c}); err != nil {
					b.Fatal(err)
				}
			}
			raw, _ := EncodeBatch(nil, 0, 0, recs)
			b.SetBytes(int64(len(raw) / per))
			b.ReportAllocs()
			b.ResetTimer()
			var off int64
			for read := 0; read < b.N; {
				if off >= l.LogEndOffset() {
					off = 0
				}
				got, err := l.Read(off, -1, 1<<20, 0)
				if err != nil || len(got) == 0 {
					b.Fatalf("Read(%d): %d, %v", off, len(got), err)
				}
				read += len(got)
				off = got[len(got)-1].Offset + 1
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkAppendIdempotent is BenchmarkAppend with every batch stamped
// by an idempotent producer, so that each append also checks and updates
// the producer state: one producer, or 1000 taking turns (more state to
// look through). "duplicate" retries a batch already in the log: the
// check answers and nothing is written.
func BenchmarkAppendIdempotent(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		for _, producers := range []int64{1, 1000} {
			b.Run(fmt.Sprintf("records=%d/producers=%d", n, producers), func(b *testing.B) {
				l := mustOpen(b, b.TempDir(), DefaultConfig())
				defer closeUntimed(b, l)
				recs := benchRecords(n)
				enc, _ := EncodeBatch(nil, 0, 0, recs)
				b.SetBytes(int64(len(enc)))
				seqs := make([]int32, producers)
				p := &Producer{}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					id := int64(i) % producers
					p.ID, p.BaseSequence = id, seqs[id]
					if _, err := l.AppendRecords(recs, 0, BatchOptions{Producer: p}); err != nil {
						b.Fatal(err)
					}
					seqs[id] += int32(n)
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
	b.Run("records=1/duplicate", func(b *testing.B) {
		l := mustOpen(b, b.TempDir(), DefaultConfig())
		defer closeUntimed(b, l)
		recs := benchRecords(1)
		p := &Producer{ID: 1}
		if _, err := l.AppendRecords(recs, 0, BatchOptions{Producer: p}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := l.AppendRecords(recs, 0, BatchOptions{Producer: p})
			if err != nil || !res.Duplicate {
				b.Fatal(res, err)
			}
		}
	})
}

// BenchmarkDecompressReused decompresses one batch's records (about
// 200 KiB of text) into the same buffer each time, as a leader validating
// Kafka producers' batches does with its scratch buffer.
func BenchmarkDecompressReused(b *testing.B) {
	for _, c := range []Compression{CompressionSnappy, CompressionLZ4, CompressionZstd} {
		b.Run(c.String(), func(b *testing.B) {
			records := bytes.Repeat([]byte("a record of text that compresses about as logs do, 0123456789 "), 3300)
			src, err := compress(nil, c, records)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(records)))
			var buf []byte
			for b.Loop() {
				if buf, err = decompress(buf[:0], c, src, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadRawAtLogEnd is a follower's fetch of each batch as it is
// appended: one small batch appended, then read at its offset.
func BenchmarkReadRawAtLogEnd(b *testing.B) {
	l := mustOpen(b, b.TempDir(), DefaultConfig())
	defer closeUntimed(b, l)
	recs := benchRecords(1)
	b.ResetTimer()
	for range b.N {
		base, _, err := l.Append(recs, 1)
		if err != nil {
			b.Fatal(err)
		}
		if raw, err := l.ReadRaw(base, -1, 1<<20); err != nil || len(raw) == 0 {
			b.Fatal(err)
		}
	}
}
