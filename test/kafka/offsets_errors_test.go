package kafka

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// TestListOffsets: kadm's start, end and by-time offsets are the log start,
// the high watermark and the first record at or after the time.
func TestListOffsets(t *testing.T) {
	c := startCluster(t, 1, nil)
	ctx := testContext(t, 60*time.Second)
	topic := "timed"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c.KafkaAddresses(), kgo.DefaultProduceTopic(topic))
	base := time.UnixMilli(time.Now().UnixMilli() - 10_000)
	for i := 0; i < 5; i++ {
		r := &kgo.Record{Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	check := func(what string, offs kadm.ListedOffsets, err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		o, ok := offs.Lookup(topic, 0)
		if !ok || o.Err != nil || o.Offset != want {
			t.Fatalf("%s: %+v, want offset %d", what, o, want)
		}
	}
	offs, err := adm.ListStartOffsets(ctx, topic)
	check("start", offs, err, 0)
	offs, err = adm.ListEndOffsets(ctx, topic)
	check("end", offs, err, 5)
	offs, err = adm.ListOffsetsAfterMilli(ctx, base.Add(2500*time.Millisecond).UnixMilli(), topic)
	check("after 2.5 s", offs, err, 3)
}

// TestErrorCodes: requests a broker cannot serve are answered with
// Kafka's error codes: a partition another broker leads is
// NOT_LEADER_OR_FOLLOWER naming that leader, an unknown topic id
// UNKNOWN_TOPIC_ID, a partition past the topic's
// UNKNOWN_TOPIC_OR_PARTITION, bad acks INVALID_REQUIRED_ACKS, a fetch past
// the log end OFFSET_OUT_OF_RANGE, and a stale leader epoch
// FENCED_LEADER_EPOCH.
func TestErrorCodes(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 60*time.Second)
	topic := "routed"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 1, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c.KafkaAddresses())
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	var leader, epoch int32 = -1, -1
	var topicID [16]byte
	for leader < 0 {
		resp, err := meta.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if p := resp.Topics[0].Partitions; len(p) == 1 && p[0].ErrorCode == 0 {
			leader, epoch, topicID = p[0].Leader, p[0].LeaderEpoch, resp.Topics[0].TopicID
		} else if ctx.Err() != nil {
			t.Fatal("no leader")
		}
	}
	follower := (leader + 1) % 3

	batch := oneRecordBatch(t)
	// kgo sends the newest versions both sides serve: Produce v13 and Fetch
	// v18, which name topics by id.
	produce := func(broker, partition int32, topicID [16]byte, acks int16) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = partition, batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	// The follower learns of the topic from the metadata log, a moment
	// after the broker that answered the metadata request.
	p := produce(follower, 0, topicID, -1)
	for (p.ErrorCode == kerr.UnknownTopicOrPartition.Code || p.ErrorCode == kerr.UnknownTopicID.Code) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		p = produce(follower, 0, topicID, -1)
	}
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != leader {
		t.Fatalf("produce on a follower: error %d, leader %d; want %d naming %d", p.ErrorCode, p.CurrentLeader.LeaderID,
			kerr.NotLeaderForPartition.Code, leader)
	}
	if p := produce(leader, 0, [16]byte{1, 2, 3}, -1); p.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("produce to an unknown topic id: error %d", p.ErrorCode)
	}
	if p := produce(leader, 7, topicID, -1); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to partition 7 of 1: error %d", p.ErrorCode)
	}
	// kgo sends its own acks; acks 2 goes over a connection of its own,
	// at v7, which names the topic.
	bad := kmsg.NewPtrProduceRequest()
	bad.Version, bad.Acks, bad.TimeoutMillis = 7, 2, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	bad.Topics = append(bad.Topics, rt)
	resp := rawRoundTrip(t, c.KafkaAddress(int(leader)), bad).(*kmsg.ProduceResponse)
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.InvalidRequiredAcks.Code {
		t.Fatalf("produce with acks 2: error %d", p.ErrorCode)
	}
	if p := produce(leader, 0, topicID, -1); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("produce on the leader: error %d at %d", p.ErrorCode, p.BaseOffset)
	}

	fetch := func(broker int32, offset int64, epoch int32) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.MaxBytes, req.MaxWaitMillis = 1<<20, 10
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = offset, 1<<20, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(broker)))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0]
	}
	if p := fetch(leader, 0, epoch); p.ErrorCode != 0 || p.HighWatermark != 1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch on the leader: error %d, high watermark %d, %d bytes", p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
	if p := fetch(follower, 0, epoch); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch on a follower: error %d", p.ErrorCode)
	}
	if p := fetch(leader, 5, epoch); p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch past the end: error %d", p.ErrorCode)
	}
	if epoch > 0 {
		if p := fetch(leader, 0, epoch-1); p.ErrorCode != kerr.FencedLeaderEpoch.Code {
			t.Fatalf("fetch with epoch %d of %d: error %d", epoch-1, epoch, p.ErrorCode)
		}
	}
	if p := fetch(leader, 0, epoch+1); p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("fetch with epoch %d of %d: error %d", epoch+1, epoch, p.ErrorCode)
	}
}

// oneRecordBatch is a RecordBatch v2 of one record, as kgo encodes it.
func oneRecordBatch(t *testing.T) []byte {
	t.Helper()
	rec := kmsg.NewRecord()
	rec.Value = []byte("v")
	// Length counts what follows it: the record encoded with a zero
	// length, less that length's one byte.
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	rb := kmsg.NewRecordBatch()
	rb.Magic, rb.NumRecords, rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence = 2, 1, -1, -1, -1
	rb.FirstTimestamp, rb.MaxTimestamp = time.Now().UnixMilli(), time.Now().UnixMilli()
	rb.Records = rec.AppendTo(nil)
	raw := rb.AppendTo(nil)
	// Length and CRC over the encoded batch, as a producer sets them.
	if err := fixBatch(raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// fixBatch sets an encoded batch's length and CRC-32C.
func fixBatch(raw []byte) error {
	if len(raw) < 61 {
		return fmt.Errorf("batch of %d bytes", len(raw))
	}
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return nil
}
