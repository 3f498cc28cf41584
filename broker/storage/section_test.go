package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// sectionRecords are records of every shape a producer sends: nil and
// empty keys and values, timestamps, headers with nil and empty values.
var sectionRecords = []Record{
	{Value: []byte("hello")},
	{},
	{Key: []byte{}, Value: []byte{}},
	{Timestamp: 1_700_000_000_123, Key: []byte("k"), Value: bytes.Repeat([]byte{0xA5}, 300)},
	{Timestamp: -1, Value: []byte("v"), Headers: []Header{{Key: "trace", Value: []byte("abc")}, {Key: "", Value: nil}, {Key: "empty", Value: []byte{}}}},
}

// TestSectionIsKafkasRecordEncoding: a section is byte for byte what
// franz-go's codec makes of the same records (offset delta the index,
// timestamp delta the timestamp), and what franz-go encodes decodes to the
// same records, so brokers that encode either way understand each other.
func TestSectionIsKafkasRecordEncoding(t *testing.T) {
	var theirs []byte
	for i, r := range sectionRecords {
		rec := kmsg.Record{TimestampDelta64: r.Timestamp, OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			rec.Headers = append(rec.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		one := rec.AppendTo(nil) // Length 0: one byte, then the fields
		theirs = binary.AppendVarint(theirs, int64(len(one)-1))
		theirs = append(theirs, one[1:]...)
	}
	ours := AppendSection(nil, sectionRecords)
	if !bytes.Equal(ours, theirs) {
		t.Fatalf("section\n%x\nfranz-go\n%x", ours, theirs)
	}
	got, err := DecodeSection(theirs, len(sectionRecords))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := sectionRecords[i]
		want.Offset = int64(i)
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("record %d decoded as %+v, want %+v", i, got[i], want)
		}
	}
}

// TestSectionRefusesMalformed: a section cut short, with more or fewer
// records than announced, bytes after the last, or offset deltas that are
// not the indexes is ErrCorrupt, never read past.
func TestSectionRefusesMalformed(t *testing.T) {
	two := AppendSection(nil, sectionRecords[:2])
	swapped := AppendSection(nil, []Record{{Value: []byte("a")}})
	swapped = appendRecord(swapped, &Record{Value: []byte("b")}, 0, 0) // delta 0 twice
	tests := []struct {
		name    string
		section []byte
		count   int
	}{
		{"cut short", two[:len(two)-1], 2},
		{"empty but announced", nil, 1},
		{"fewer than announced", two, 3},
		{"more than announced", two, 1},
		{"bytes after", append(append([]byte{}, two...), 0x02, 0x00), 2},
		{"bytes after none", []byte{0}, 0},
		{"negative count", two, -1},
		{"count beyond the bytes", two, 1 << 30},
		{"repeated offset delta", swapped, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := DecodeSection(tt.section, tt.count); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decoded %+v, %v; want ErrCorrupt", got, err)
			}
		})
	}
}
