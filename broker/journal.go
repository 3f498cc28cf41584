package broker

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// offsetsTopic is the internal topic that journals consumer-group state.
const offsetsTopic = "__consumer_offsets"

// journalTimeout bounds one acks=all append of a group record.
const journalTimeout = 10 * time.Second

// offsetsJournal is the group.Journal of one __consumer_offsets partition:
// each group change is a record keyed by the group id, appended with
// acks=all, so a change is acknowledged only once every in-sync replica has
// it and survives the loss of this broker.
type offsetsJournal struct {
	b         *Broker
	partition int32
	// written counts bytes appended since the last snapshot, for compaction.
	written atomic.Int64
}

func (j *offsetsJournal) Append(ctx context.Context, group string, record []byte) error {
	_, _, err := j.b.replicas.Produce(ctx, offsetsTopic, j.partition,
		[]storage.Record{{Key: []byte(group), Value: record}}, replica.AcksAll, journalTimeout)
	if err != nil {
		return apiError(err)
	}
	j.written.Add(int64(len(group) + len(record)))
	return nil
}

// groupPartition is Kafka's choice of a group's __consumer_offsets
// partition: abs(groupId.hashCode()) % partitions, with Java's String
// hashCode over UTF-16 code units, so a group maps where Kafka would map it.
func groupPartition(groupID string, partitions int32) int32 {
	var h int32
	for _, r := range groupID {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}
