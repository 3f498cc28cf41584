package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// TestAppendBatchStoresProducersBytes: a Kafka producer's batch is
// stored byte for byte except for the base offset and the partition
// leader epoch, both outside the CRC, which still verifies; its retry is
// a duplicate.
func TestAppendBatchStoresProducersBytes(t *testing.T) {
	cfg := smallConfig()
	l := mustOpen(t, t.TempDir(), cfg)
	defer l.Close()
	appendRange(t, l, 0, 10, 5, 1) // the log does not start at 0
	for i, compress := range []func([]byte) ([]byte, int16){nil, func(b []byte) ([]byte, int16) { return otherClients["zstd-best"](t, b) }} {
		start := l.LogEndOffset()
		recs := kafkaRecords(7, 1_700_000_000_000)
		pid := 77 + int64(i)
		sent := kmsgEncode(t, 0, -1, recs, pid, 2, 0, compress)
		b := bytes.Clone(sent)
		res, err := l.AppendBatch(b, 3)
		if err != nil || res.BaseOffset != start || res.LastOffset != start+6 || res.Duplicate {
			t.Fatalf("AppendBatch = %+v, %v; want %d-%d", res, err, start, start+6)
		}
		raw, err := l.ReadRaw(start, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := bytes.Clone(sent)
		binary.BigEndian.PutUint64(want[0:], uint64(start))
		binary.BigEndian.PutUint32(want[12:], 3)
		if !bytes.Equal(raw, want) {
			t.Fatalf("stored batch differs from the producer's beyond baseOffset and partitionLeaderEpoch")
		}
		if _, err := VerifyBatch(raw); err != nil {
			t.Fatal(err)
		}
		got, err := l.Read(start, -1, 0, 0)
		if err != nil || len(got) != 7 {
			t.Fatalf("Read: %d records, %v", len(got), err)
		}
		for i := range got {
			if got[i].Offset != start+int64(i) || !sameRecord(got[i], recs[i]) {
				t.Fatalf("record %d = %+v, want %+v", i, got[i], recs[i])
			}
		}
		// The producer retries: the same bytes again, nothing written.
		res, err = l.AppendBatch(bytes.Clone(sent), 3)
		if err != nil || !res.Duplicate || res.BaseOffset != start || l.LogEndOffset() != start+7 {
			t.Fatalf("retry: %+v, %v, log end %d", res, err, l.LogEndOffset())
		}
		// The next epoch of the producer starts again at sequence 0.
		next := kmsgEncode(t, 0, -1, recs[:2], pid, 3, 0, compress)
		if res, err := l.AppendBatch(next, 3); err != nil || res.BaseOffset != start+7 {
			t.Fatalf("next epoch: %+v, %v", res, err)
		}
		if _, err := l.AppendBatch(bytes.Clone(sent), 3); !errors.Is(err, ErrInvalidProducerEpoch) {
			t.Fatalf("the old epoch's retry after the new epoch wrote: %v", err)
		}
	}
}

// TestAppendBatchValidates: what a producer's batch must be before
// anything is written.
func TestAppendBatchValidates(t *testing.T) {
	cfg := smallConfig()
	cfg.MaxBatchBytes = 64 << 10
	recs := kafkaRecords(3, 1000)
	good := func() []byte { return kmsgEncode(t, 0, -1, recs, 5, 0, 0, nil) }
	resign := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[posCRC:], crc32c(b[posAttributes:]))
		return b
	}
	attr := func(bits int16) []byte {
		b := good()
		binary.BigEndian.PutUint16(b[posAttributes:], uint16(bits))
		return resign(b)
	}
	big := make([]Record, 4)
	for i := range big {
		big[i].Value = make([]byte, 20<<10)
	}
	cases := []struct {
		name  string
		batch []byte
		want  error
	}{
		{"bad CRC", func() []byte { b := good(); b[len(b)-1] ^= 1; return b }(), ErrCorrupt},
		{"truncated", good()[:40], ErrCorrupt},
		{"two batches", append(good(), good()...), ErrCorrupt},
		{"magic 1", func() []byte { b := good(); b[posMagic] = 1; return b }(), ErrCorrupt},
		{"transactional", attr(transactionalBit), ErrInvalidRecord},
		{"control", attr(controlBit), ErrInvalidRecord},
		{"log append time", attr(logAppendTimeBit), ErrInvalidRecord},
		{"offset deltas not 0, 1, 2", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[posLastDelta:], 5)
			return resign(b)
		}(), ErrInvalidRecord},
		{"negative producer epoch", kmsgEncode(t, 0, -1, recs, 5, -1, 0, nil), ErrInvalidProducer},
		{"negative sequence", kmsgEncode(t, 0, -1, recs, 5, 0, -3, nil), ErrInvalidProducer},
		{"too large", kmsgEncode(t, 0, -1, big, -1, -1, -1, nil), ErrBatchTooLarge},
		{"too large once decompressed", kmsgEncode(t, 0, -1, big, -1, -1, -1, func(b []byte) ([]byte, int16) {
			return otherClients["zstd-best"](t, b)
		}), ErrBatchTooLarge},
		{"corrupt compressed records", kmsgEncode(t, 0, -1, recs, -1, -1, -1, func(b []byte) ([]byte, int16) {
			return bytes.Repeat([]byte{0x28}, 40), 4
		}), ErrCorrupt},
	}
	l := mustOpen(t, t.TempDir(), cfg)
	defer l.Close()
	for _, c := range cases {
		if _, err := l.AppendBatch(c.batch, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if l.LogEndOffset() != 0 || len(l.Producers()) != 0 {
		t.Fatalf("refused batches changed the log: end %d, producers %+v", l.LogEndOffset(), l.Producers())
	}
	if _, err := l.AppendBatch(good(), 2); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatch(kmsgEncode(t, 0, -1, recs, 5, 0, 3, nil), 1); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("an older leader epoch: %v", err)
	}
}
