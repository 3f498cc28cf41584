package storage

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// These tests hold the batch format against Kafka's own definition:
// franz-go's kmsg is generated from Kafka's message specs, so a batch that
// kmsg reads as the broker wrote it, and a batch kmsg writes that the log
// stores and serves, are Kafka's RecordBatch v2.

// kmsgRecords decodes the records section of a batch with kmsg.Record.
func kmsgRecords(t *testing.T, b []byte, n int32) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	for range n {
		length, k := binary.Varint(b)
		if k <= 0 || int(length) > len(b)-k {
			t.Fatalf("record length varint %d (%d bytes) in %d bytes", length, k, len(b))
		}
		var r kmsg.Record
		if err := r.ReadFrom(b[:k+int(length)]); err != nil {
			t.Fatalf("kmsg.Record: %v", err)
		}
		out = append(out, r)
		b = b[k+int(length):]
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes after the last record", len(b))
	}
	return out
}

// kmsgEncode encodes records as a Kafka producer would, with kmsg, in a
// batch with the given producer fields and attributes; records is the
// (uncompressed) records section when compress is nil.
func kmsgEncode(t *testing.T, base int64, epoch int32, recs []Record, pid int64, pepoch int16, seq int32, compress func([]byte) ([]byte, int16)) []byte {
	t.Helper()
	first, maxTs := recs[0].Timestamp, recs[0].Timestamp
	var section []byte
	for i, r := range recs {
		maxTs = max(maxTs, r.Timestamp)
		kr := kmsg.Record{TimestampDelta64: r.Timestamp - first, OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		// Length counts the bytes after itself: encode once to learn it.
		body := kr.AppendTo(nil)
		kr.Length = int32(len(body) - 1)
		section = kr.AppendTo(section)
	}
	attrs := int16(0)
	if compress != nil {
		section, attrs = compress(section)
	}
	kb := kmsg.RecordBatch{
		FirstOffset: base, PartitionLeaderEpoch: epoch, Magic: 2, Attributes: attrs,
		LastOffsetDelta: int32(len(recs) - 1), FirstTimestamp: first, MaxTimestamp: maxTs,
		ProducerID: pid, ProducerEpoch: pepoch, FirstSequence: seq, NumRecords: int32(len(recs)), Records: section,
	}
	b := kb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// sameRecord compares a record with what was appended, nil and empty
// keys, values and header values told apart.
func sameRecord(a, b Record) bool {
	if a.Timestamp != b.Timestamp || !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil) ||
		!bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !bytes.Equal(a.Headers[i].Value, b.Headers[i].Value) ||
			(a.Headers[i].Value == nil) != (b.Headers[i].Value == nil) {
			return false
		}
	}
	return true
}

// kafkaRecords are records with every shape a Kafka client can send.
func kafkaRecords(n int, tsBase int64) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := rec(int64(i))
		r.Timestamp = tsBase + int64(i*7%5)
		if i%5 == 1 {
			r.Key = []byte{}
		}
		if i%6 == 2 {
			r.Value = nil
		}
		if i%4 == 3 {
			r.Headers = []Header{{Key: "k", Value: nil}, {Key: "", Value: []byte{}}, {Key: "trace", Value: []byte("x")}}
		}
		recs[i] = r
	}
	return recs
}

// TestBrokerBatchesAreKafkaV2 reads the bytes the log wrote to disk and
// sent to a follower with kmsg: every batch parses as a RecordBatch v2,
// its CRC-32C verifies, its header says what was appended and its records
// are the ones appended.
func TestBrokerBatchesAreKafkaV2(t *testing.T) {
	dir := t.TempDir()
	l := mustOpen(t, dir, smallConfig())
	var appended []Record
	for i, n := range []int{1, 3, 17, 2, 40, 1, 9} {
		recs := kafkaRecords(n, 1_700_000_000_000+int64(i)*100)
		if _, _, err := l.Append(recs, int32(i/3)); err != nil {
			t.Fatal(err)
		}
		appended = append(appended, recs...)
	}
	raw, err := l.ReadRaw(0, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var onDisk []byte
	for _, p := range segmentFiles(t, dir, logSuffix) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		onDisk = append(onDisk, b...)
	}
	for what, b := range map[string][]byte{"segment files": onDisk, "ReadRaw": raw} {
		var got []Record
		next := int64(0)
		for len(b) > 0 {
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(b); err != nil {
				t.Fatalf("%s: kmsg.RecordBatch at offset %d: %v", what, next, err)
			}
			size := int(kb.Length) + 12
			if kb.Magic != 2 || kb.FirstOffset != next || kb.ProducerID != -1 || kb.ProducerEpoch != -1 || kb.FirstSequence != -1 ||
				kb.Attributes != 0 || kb.LastOffsetDelta != kb.NumRecords-1 {
				t.Fatalf("%s: batch at %d: %+v", what, next, kb)
			}
			if crc := crc32.Checksum(b[21:size], crc32.MakeTable(crc32.Castagnoli)); uint32(kb.CRC) != crc {
				t.Fatalf("%s: batch at %d: CRC %08x, computed %08x", what, next, uint32(kb.CRC), crc)
			}
			maxTs := kb.FirstTimestamp
			for _, kr := range kmsgRecords(t, kb.Records, kb.NumRecords) {
				r := Record{Timestamp: kb.FirstTimestamp + kr.TimestampDelta64, Key: kr.Key, Value: kr.Value}
				for _, h := range kr.Headers {
					r.Headers = append(r.Headers, Header{Key: h.Key, Value: h.Value})
				}
				maxTs = max(maxTs, r.Timestamp)
				got = append(got, r)
			}
			if maxTs != kb.MaxTimestamp {
				t.Fatalf("%s: batch at %d: max timestamp %d, records' %d", what, next, kb.MaxTimestamp, maxTs)
			}
			next += int64(kb.LastOffsetDelta) + 1
			b = b[size:]
		}
		if len(got) != len(appended) {
			t.Fatalf("%s: %d records, appended %d", what, len(got), len(appended))
		}
		for i := range got {
			if !sameRecord(got[i], appended[i]) {
				t.Fatalf("%s: record %d = %+v, appended %+v", what, i, got[i], appended[i])
			}
		}
	}
}

// TestKafkaBatchesAppend appends batches kmsg encoded, as a follower
// takes its leader's, and reads them back record for record; the stored
// bytes are the bytes kmsg wrote.
func TestKafkaBatchesAppend(t *testing.T) {
	l := mustOpen(t, t.TempDir(), smallConfig())
	defer l.Close()
	var appended []Record
	var sent []byte
	next := int64(0)
	for i, n := range []int{1, 5, 30, 2} {
		recs := kafkaRecords(n, 1_600_000_000_000+int64(i)*10)
		b := kmsgEncode(t, next, 4, recs, 1000+int64(i), 3, int32(i*10), nil)
		if _, err := l.AppendRaw(b); err != nil {
			t.Fatalf("AppendRaw of kmsg batch %d: %v", i, err)
		}
		sent = append(sent, b...)
		appended = append(appended, recs...)
		next += int64(n)
	}
	got := readAll(t, l)
	if len(got) != len(appended) {
		t.Fatalf("%d records, appended %d", len(got), len(appended))
	}
	for i := range got {
		if got[i].Offset != int64(i) || !sameRecord(got[i], appended[i]) {
			t.Fatalf("record %d = %+v, appended %+v", i, got[i], appended[i])
		}
	}
	raw, err := l.ReadRaw(0, -1, 0)
	if err != nil || !bytes.Equal(raw, sent) {
		t.Fatalf("ReadRaw: %v; %d bytes, sent %d, equal %v", err, len(raw), len(sent), bytes.Equal(raw, sent))
	}
}
