package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"
)

func TestBatchRoundTrip(t *testing.T) {
	records := []Record{
		{Timestamp: 1000, Key: nil, Value: []byte("no key")},
		{Timestamp: 999, Key: []byte{}, Value: []byte("empty key")},
		{Timestamp: 1005, Key: []byte("k"), Value: nil},
		{Timestamp: 1001, Key: []byte("k"), Value: []byte{}, Headers: []Header{{Key: "a", Value: []byte("1")}, {Key: "", Value: nil}, {Key: "c", Value: []byte{}}}},
		{Timestamp: -5, Key: bytes.Repeat([]byte("x"), 300), Value: bytes.Repeat([]byte("y"), 70000)},
	}
	b, err := EncodeBatch(nil, 42, 7, records)
	if err != nil {
		t.Fatal(err)
	}
	h, got, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	want := BatchHeader{BaseOffset: 42, Length: int32(len(b) - 12), LeaderEpoch: 7, Magic: 2, CRC: h.CRC, LastOffsetDelta: 4,
		FirstTimestamp: 1000, MaxTimestamp: 1005, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 5}
	if h != want {
		t.Fatalf("header = %+v, want %+v", h, want)
	}
	if h.Size() != len(b) || h.LastOffset() != 46 || h.NextOffset() != 47 {
		t.Fatalf("Size/LastOffset/NextOffset = %d/%d/%d", h.Size(), h.LastOffset(), h.NextOffset())
	}
	for i, r := range got {
		w := records[i]
		if r.Offset != 42+int64(i) || r.Timestamp != w.Timestamp || !bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
			!bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) || len(r.Headers) != len(w.Headers) {
			t.Fatalf("record %d = %+v, want %+v", i, r, w)
		}
		for j := range r.Headers {
			if r.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(r.Headers[j].Value, w.Headers[j].Value) ||
				(r.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
				t.Fatalf("record %d header %d = %+v, want %+v", i, j, r.Headers[j], w.Headers[j])
			}
		}
	}
}

// TestBatchLayout pins the bytes documented in the package comment.
func TestBatchLayout(t *testing.T) {
	b, err := EncodeBatch([]byte("prefix"), 0x0102030405060708, -1, []Record{{Timestamp: 0x10, Key: []byte("k"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:6]) != "prefix" {
		t.Fatal("EncodeBatch must append to dst")
	}
	b = b[6:]
	be := binary.BigEndian
	checks := []struct {
		name string
		got  uint64
		want uint64
	}{
		{"baseOffset", be.Uint64(b[0:]), 0x0102030405060708},
		{"batchLength", uint64(be.Uint32(b[8:])), uint64(len(b) - 12)},
		{"partitionLeaderEpoch", uint64(be.Uint32(b[12:])), 0xffffffff},
		{"magic", uint64(b[16]), 2},
		{"crc", uint64(be.Uint32(b[17:])), uint64(crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))},
		{"attributes", uint64(be.Uint16(b[21:])), 0},
		{"lastOffsetDelta", uint64(be.Uint32(b[23:])), 0},
		{"baseTimestamp", be.Uint64(b[27:]), 0x10},
		{"maxTimestamp", be.Uint64(b[35:]), 0x10},
		{"producerId", be.Uint64(b[43:]), math.MaxUint64},
		{"producerEpoch", uint64(be.Uint16(b[51:])), 0xffff},
		{"baseSequence", uint64(be.Uint32(b[53:])), 0xffffffff},
		{"recordCount", uint64(be.Uint32(b[57:])), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
	// length 8 | attributes 0 | tsDelta 0 | offsetDelta 0 | keyLen 1 'k' | valueLen 1 'v' | 0 headers, zig-zag varints.
	rec := []byte{16, 0, 0, 0, 2, 'k', 2, 'v', 0}
	if !bytes.Equal(b[61:], rec) {
		t.Fatalf("record bytes = %v, want %v", b[61:], rec)
	}
	// A nil key and value are written as length -1 (zig-zag 1).
	b, _ = EncodeBatch(nil, 0, 0, []Record{{}})
	if rec := b[61:]; !bytes.Equal(rec, []byte{12, 0, 0, 0, 1, 1, 0}) {
		t.Fatalf("nil record bytes = %v", rec)
	}
}

func TestEncodeBatchExtremes(t *testing.T) {
	recs := []Record{{Timestamp: math.MaxInt64}, {Timestamp: math.MinInt64}, {Timestamp: 0}}
	b, err := EncodeBatch(nil, math.MaxInt64-3, math.MaxInt32, recs)
	if err != nil {
		t.Fatal(err)
	}
	h, got, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.MaxTimestamp != math.MaxInt64 || got[1].Timestamp != math.MinInt64 || got[2].Offset != math.MaxInt64-1 {
		t.Fatalf("header %+v records %+v", h, got)
	}
	if _, err := EncodeBatch(nil, 0, 0, nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := EncodeBatch(nil, -1, 0, recs); err == nil {
		t.Fatal("negative base offset accepted")
	}
}

func TestDecodeBatchRejectsDamage(t *testing.T) {
	good, _ := EncodeBatch(nil, 10, 1, []Record{rec(1), rec(2), rec(3)})
	resign := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[posCRC:], crc32.Checksum(b[posAttributes:], castagnoli))
		return b
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"empty":             nil,
		"short header":      good[:BatchHeaderSize-1],
		"truncated":         good[:len(good)-1],
		"flipped crc":       mutate(func(b []byte) []byte { b[posCRC] ^= 1; return b }),
		"flipped value":     mutate(func(b []byte) []byte { b[len(b)-5] ^= 0x40; return b }),
		"flipped timestamp": mutate(func(b []byte) []byte { b[posFirstTs+7] ^= 1; return b }),
		"negative base":     mutate(func(b []byte) []byte { b[0] = 0x80; return b }),
		"huge length":       mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posLength:], math.MaxInt32); return b }),
		"tiny length":       mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posLength:], 30); return b }),
		"count too high":    mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posRecordCount:], 4); return resign(b) }),
		"count too low":     mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posRecordCount:], 2); return resign(b) }),
		"delta mismatch":    mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posLastDelta:], 3); return resign(b) }),
		"max ts mismatch":   mutate(func(b []byte) []byte { b[posMaxTs+7]++; return resign(b) }),
		"compressed":        mutate(func(b []byte) []byte { b[posAttributes+1] = 1; return resign(b) }),
		"magic 1":           mutate(func(b []byte) []byte { b[posMagic] = 1; return b }),
		"magic 3":           mutate(func(b []byte) []byte { b[posMagic] = 3; return b }),
		"record length":     mutate(func(b []byte) []byte { b[BatchHeaderSize] += 2; return resign(b) }),
		"zero count":        mutate(func(b []byte) []byte { binary.BigEndian.PutUint32(b[posRecordCount:], 0); return resign(b) }),
	}
	for name, b := range cases {
		if _, _, err := DecodeBatch(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: DecodeBatch err = %v, want ErrCorrupt", name, err)
		}
		if _, err := VerifyBatch(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: VerifyBatch err = %v, want ErrCorrupt", name, err)
		}
	}
	// Trailing bytes after a batch are not part of it.
	if _, recs, err := DecodeBatch(append(append([]byte(nil), good...), 1, 2, 3)); err != nil || len(recs) != 3 {
		t.Fatalf("batch followed by bytes: %v, %d records", err, len(recs))
	}
}

func TestVarintLen(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 8191, 8192, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		if got, want := varintLen(v), len(binary.AppendVarint(nil, v)); got != want {
			t.Errorf("varintLen(%d) = %d, want %d", v, got, want)
		}
	}
}
