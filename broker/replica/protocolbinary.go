package replica

import (
	"github.com/kairolog/kairolog/broker/peer/binwire"
)

// The binary encodings of the fetch session's request and reply
// (peer.Binary), used on peer streams that carry them: the same fields as
// the JSON, in order, with Kafka's primitives (kbin: big-endian integers,
// compact strings). A session request or reply crosses the wire for every
// replicated append, and decoding its JSON cost the leader and the
// follower more than the rest of the call.
//
//	request  version, replica_id i32, session_id u32, session_epoch i32,
//	         wait_ms i64, max_bytes i64,
//	         partitions: count i32, each topic, topic_id, partition i32,
//	           leader_epoch i32, fetch_offset i64, last_fetched_epoch i32,
//	           max_bytes i64
//	         forgotten: count i32, each topic, partition i32
//	reply    version, session_id u32,
//	         partitions: count i32, each topic, partition i32, what u8;
//	           what 1: error body; 2: diverging epoch i32, end_offset i64;
//	           0: high_watermark i64, log_start_offset i64,
//	           log_end_offset i64, bytes i64
//	         then the batches, to the end
//
// A topic is a compact string; the smallest entries bound what a count
// can make a decoder allocate.
const (
	minRequestPartitionBytes = 1 + 1 + 4 + 4 + 8 + 4 + 8
	minForgottenBytes        = 1 + 4
	minReplyPartitionBytes   = 1 + 4 + 1 + 1
)

// What a reply's partition entry carries.
const (
	replyOffsets   byte = 0
	replyError     byte = 1
	replyDiverging byte = 2
)

func (r *sessionRequest) AppendPeerBinary(b []byte) []byte {
	b = append(b, binwire.Version)
	b = binwire.AppendInt32(b, r.ReplicaID)
	b = binwire.AppendUint32(b, r.SessionID)
	b = binwire.AppendInt32(b, r.SessionEpoch)
	b = binwire.AppendInt64(b, r.WaitMs)
	b = binwire.AppendInt64(b, int64(r.MaxBytes))
	b = binwire.AppendInt32(b, int32(len(r.Partitions)))
	for _, p := range r.Partitions {
		b = binwire.AppendString(b, p.Topic)
		b = binwire.AppendString(b, p.TopicID)
		b = binwire.AppendInt32(b, p.Partition)
		b = binwire.AppendInt32(b, p.LeaderEpoch)
		b = binwire.AppendInt64(b, p.FetchOffset)
		b = binwire.AppendInt32(b, p.LastFetchedEpoch)
		b = binwire.AppendInt64(b, int64(p.MaxBytes))
	}
	b = binwire.AppendInt32(b, int32(len(r.Forgotten)))
	for _, f := range r.Forgotten {
		b = binwire.AppendString(b, f.Topic)
		b = binwire.AppendInt32(b, f.Partition)
	}
	return b
}

func (r *sessionRequest) DecodePeerBinary(src []byte) error {
	d := binwire.NewReader(src)
	r.ReplicaID = d.Int32()
	r.SessionID = d.Uint32()
	r.SessionEpoch = d.Int32()
	r.WaitMs = d.Int64()
	r.MaxBytes = d.Int()
	if n := d.Count(minRequestPartitionBytes); n > 0 {
		r.Partitions = make([]sessionPartitionRequest, n)
		for i := range r.Partitions {
			p := &r.Partitions[i]
			p.Topic = d.CompactString()
			p.TopicID = d.CompactString()
			p.Partition = d.Int32()
			p.LeaderEpoch = d.Int32()
			p.FetchOffset = d.Int64()
			p.LastFetchedEpoch = d.Int32()
			p.MaxBytes = d.Int()
		}
	}
	if n := d.Count(minForgottenBytes); n > 0 {
		r.Forgotten = make([]topicPartition, n)
		for i := range r.Forgotten {
			r.Forgotten[i] = topicPartition{Topic: d.CompactString(), Partition: d.Int32()}
		}
	}
	return d.Done()
}

func (r *sessionReply) AppendPeerBinary(b []byte) []byte {
	b = append(b, binwire.Version)
	b = binwire.AppendUint32(b, r.SessionID)
	b = binwire.AppendInt32(b, int32(len(r.Partitions)))
	for _, p := range r.Partitions {
		b = binwire.AppendString(b, p.Topic)
		b = binwire.AppendInt32(b, p.Partition)
		switch {
		case p.Error != nil:
			b = append(b, replyError)
			b = binwire.AppendErrorBody(b, p.Error)
		case p.Diverging != nil:
			b = append(b, replyDiverging)
			b = binwire.AppendInt32(b, p.Diverging.Epoch)
			b = binwire.AppendInt64(b, p.Diverging.EndOffset)
		default:
			b = append(b, replyOffsets)
			b = binwire.AppendInt64(b, p.HighWatermark)
			b = binwire.AppendInt64(b, p.LogStartOffset)
			b = binwire.AppendInt64(b, p.LogEndOffset)
			b = binwire.AppendInt64(b, int64(p.Bytes))
		}
	}
	return b // Batches follow, as the payload
}

func (r *sessionReply) DecodePeerBinary(src []byte) error {
	d := binwire.NewReader(src)
	r.SessionID = d.Uint32()
	if n := d.Count(minReplyPartitionBytes); n > 0 {
		r.Partitions = make([]sessionPartitionReply, n)
		for i := range r.Partitions {
			p := &r.Partitions[i]
			p.Topic = d.CompactString()
			p.Partition = d.Int32()
			switch what := d.Int8(); byte(what) {
			case replyError:
				p.Error = d.ErrorBody()
			case replyDiverging:
				p.Diverging = &epochEndOffset{Epoch: d.Int32(), EndOffset: d.Int64()}
			case replyOffsets:
				p.HighWatermark = d.Int64()
				p.LogStartOffset = d.Int64()
				p.LogEndOffset = d.Int64()
				p.Bytes = d.Int()
			default:
				d.Fail("partition entry of kind %d", what)
			}
		}
	}
	r.Batches = d.Payload()
	return d.Done()
}
