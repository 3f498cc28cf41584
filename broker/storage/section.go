package storage

import "fmt"

// A records section on its own: records one after the other, each in
// Kafka's v2 record encoding, as a batch with base offset and base
// timestamp 0 holds them after its header — each record's offset delta is
// its index and its timestamp delta its Timestamp. A broker passes a
// produce's records on to their leader in this form (broker/core), so the
// leader reads keys and values in place.

// AppendSection appends recs to dst as a records section.
func AppendSection(dst []byte, recs []Record) []byte {
	for i := range recs {
		dst = appendRecord(dst, &recs[i], recs[i].Timestamp, int64(i))
	}
	return dst
}

// DecodeSection decodes the count records of a section AppendSection
// encoded, refusing with ErrCorrupt any other number of records, bytes
// after the last one, or an offset delta that is not the record's index.
// Keys, values and header values alias b; Offset is each record's index.
func DecodeSection(b []byte, count int) ([]Record, error) {
	if count < 0 || count > len(b)/minRecordSize {
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrCorrupt, count, len(b))
	}
	if count == 0 {
		if len(b) > 0 {
			return nil, fmt.Errorf("%w: %d bytes after the last record", ErrCorrupt, len(b))
		}
		return []Record{}, nil
	}
	var d recordDecoder
	d.reset(b, BatchHeader{RecordCount: int32(count), LastOffsetDelta: int32(count - 1)})
	out := make([]Record, 0, count)
	for d.more() {
		r, err := d.next(true)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if d.p != len(b) {
		return nil, d.corrupt("bytes after the last record")
	}
	if d.prevDelta != int64(count-1) {
		return nil, d.corrupt("offset deltas do not count the records")
	}
	return out, nil
}
