package coordinators

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// journalTimeout bounds one acks=all append of a group record.
const journalTimeout = 10 * time.Second

// offsetsJournal is the group.Journal of one __consumer_offsets partition:
// each group change is a record keyed by the group id, appended with
// acks=all, so a change is acknowledged only once every in-sync replica has
// it and survives the loss of this broker.
type offsetsJournal struct {
	cs        *Coordinators
	partition int32
	// written counts the key and value bytes of the group changes appended
	// since the last compaction (after a load: everything replayed);
	// snapshotted counts the bytes of snapshots (AppendBatch), and
	// snapshotBytes is the size of the last one. compaction.go compares
	// them.
	written       atomic.Int64
	snapshotted   atomic.Int64
	snapshotBytes atomic.Int64
	// grown, if set, is called after every successful append.
	grown func()
}

func (j *offsetsJournal) Append(ctx context.Context, group string, record []byte) error {
	return j.append(ctx, []storage.Record{{Key: []byte(group), Value: record}}, &j.written)
}

// AppendBatch writes a group's snapshot (the only batch the coordinator
// writes, group.WriteSnapshot) as one batch, so a replica never
// holds half of it. A snapshot larger than a batch may be (max.message.bytes
// of the topic) is written record by record instead: a partial snapshot in
// the journal is harmless, since every record of it describes the state
// correctly and the log start only moves after the whole snapshot.
func (j *offsetsJournal) AppendBatch(ctx context.Context, group string, records [][]byte) error {
	recs := make([]storage.Record, len(records))
	for i, r := range records {
		recs[i] = storage.Record{Key: []byte(group), Value: r}
	}
	err := j.append(ctx, recs, &j.snapshotted)
	if !errors.Is(err, storage.ErrBatchTooLarge) {
		return err
	}
	for _, r := range recs {
		if err := j.append(ctx, []storage.Record{r}, &j.snapshotted); err != nil {
			return err
		}
	}
	return nil
}

// append writes recs as one batch with acks=all and adds their size to
// count.
func (j *offsetsJournal) append(ctx context.Context, recs []storage.Record, count *atomic.Int64) error {
	if _, _, err := j.cs.replicas.Produce(ctx, Topic, j.partition, recs, replica.AcksAll, journalTimeout); err != nil {
		return err
	}
	var n int64
	for _, r := range recs {
		n += int64(len(r.Key) + len(r.Value))
	}
	count.Add(n)
	if j.grown != nil {
		j.grown()
	}
	return nil
}

// Partition is Kafka's choice of a group's __consumer_offsets partition:
// abs(groupId.hashCode()) % partitions, with Java's String hashCode over
// UTF-16 code units, so a group maps where Kafka would map it.
func Partition(groupID string, partitions int32) int32 {
	var h int32
	for _, r := range groupID {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + (0xD800 + (r >> 10))
			h = 31*h + (0xDC00 + (r & 0x3FF))
			continue
		}
		h = 31*h + r
	}
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}
