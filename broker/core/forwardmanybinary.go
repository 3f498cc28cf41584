package core

import (
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer/binwire"
)

// The binary encodings of opProduceMany's request and answer
// (peer.Binary), used on peer streams that carry them: the same fields as
// the JSON, in order, with Kafka's primitives (package binwire). Every
// record produced through a broker that does not lead its partition
// crosses them.
//
//	request  version, produces: count i32, each topic, partition i32,
//	         epoch i32, acks i64, timeout i64 (ns), count i64, bytes i64;
//	         then the records of every produce, to the end
//	answer   version, produces: count i32, each status i64,
//	         error (u8 0, or 1 and an error body),
//	         runs: count i32, each partition i32, offset i64, count i64,
//	         code, error, duplicate u8
const (
	minForwardedPartBytes = 1 + 4 + 4 + 8 + 8 + 8 + 8
	minProducedPartBytes  = 8 + 1 + 4
	minPositionRunBytes   = 4 + 8 + 8 + 1 + 1 + 1
)

func (f *forwardedProduces) AppendPeerBinary(b []byte) []byte {
	b = append(b, binwire.Version)
	b = binwire.AppendInt32(b, int32(len(f.Produces)))
	for _, p := range f.Produces {
		b = binwire.AppendString(b, p.Topic)
		b = binwire.AppendInt32(b, p.Partition)
		b = binwire.AppendInt32(b, p.Epoch)
		b = binwire.AppendInt64(b, int64(p.Acks))
		b = binwire.AppendInt64(b, int64(p.Timeout))
		b = binwire.AppendInt64(b, int64(p.Count))
		b = binwire.AppendInt64(b, int64(p.Bytes))
	}
	return b // the records follow, as the payload
}

func (f *forwardedProduces) DecodePeerBinary(src []byte) error {
	d := binwire.NewReader(src)
	if n := d.Count(minForwardedPartBytes); n > 0 {
		f.Produces = make([]forwardedPart, n)
		for i := range f.Produces {
			p := &f.Produces[i]
			p.Topic = d.CompactString()
			p.Partition = d.Int32()
			p.Epoch = d.Int32()
			p.Acks = api.Acks(d.Int())
			p.Timeout = time.Duration(d.Int64())
			p.Count = d.Int()
			p.Bytes = d.Int()
		}
	}
	f.records = d.Payload()
	return d.Done()
}

func (e *producedEach) AppendPeerBinary(b []byte) []byte {
	b = append(b, binwire.Version)
	b = binwire.AppendInt32(b, int32(len(e.Produces)))
	for _, p := range e.Produces {
		b = binwire.AppendInt64(b, int64(p.Status))
		if p.Error != nil {
			b = append(b, 1)
			b = binwire.AppendErrorBody(b, p.Error)
		} else {
			b = append(b, 0)
		}
		b = binwire.AppendInt32(b, int32(len(p.Runs)))
		for _, r := range p.Runs {
			b = binwire.AppendInt32(b, r.Partition)
			b = binwire.AppendInt64(b, r.Offset)
			b = binwire.AppendInt64(b, int64(r.Count))
			b = binwire.AppendString(b, r.Code)
			b = binwire.AppendString(b, r.Error)
			b = binwire.AppendBool(b, r.Duplicate)
		}
	}
	return b
}

func (e *producedEach) DecodePeerBinary(src []byte) error {
	d := binwire.NewReader(src)
	if n := d.Count(minProducedPartBytes); n > 0 {
		e.Produces = make([]producedPart, n)
		for i := range e.Produces {
			p := &e.Produces[i]
			p.Status = d.Int()
			switch hasError := d.Int8(); hasError {
			case 1:
				p.Error = d.ErrorBody()
			case 0:
			default:
				d.Fail("error flag %d", hasError)
			}
			if n := d.Count(minPositionRunBytes); n > 0 {
				p.Runs = make([]positionRun, n)
				for j := range p.Runs {
					r := &p.Runs[j]
					r.Partition = d.Int32()
					r.Offset = d.Int64()
					r.Count = d.Int()
					r.Code = d.CompactString()
					r.Error = d.CompactString()
					r.Duplicate = d.Bool()
				}
			}
		}
	}
	return d.Done()
}
