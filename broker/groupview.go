package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/group"
	"github.com/kairolog/kairolog/broker/replica"
)

// partitionOffsets are a partition's bounds as its leader sees them.
type partitionOffsets struct {
	LogStartOffset int64 `json:"log_start_offset"`
	HighWatermark  int64 `json:"high_watermark"`
	LogEndOffset   int64 `json:"log_end_offset"`
	// OffsetForTimestamp is set when the request asked for a timestamp.
	OffsetForTimestamp *int64 `json:"offset_for_timestamp,omitempty"`
}

// internalOffsetsPath answers partitionOffsets for partitions this broker
// leads; a coordinator on another broker uses it for lag and resets.
const internalOffsetsPath = "/internal/broker/offsets"

// groupView is the group.Partitions the coordinators read: partition counts
// from the metadata, offsets from each partition's leader.
type groupView struct{ b *Broker }

func (b *Broker) groupView() group.Partitions { return groupView{b} }

func (v groupView) PartitionCount(topic string) (int32, bool) {
	t := v.b.image().Topic(topic)
	if t == nil {
		return 0, false
	}
	return int32(len(t.Partitions)), true
}

// groupViewTimeout bounds one read of a partition's offsets from its
// leader, within the request's own deadline.
const groupViewTimeout = 5 * time.Second

func (v groupView) offsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	ctx, cancel := context.WithTimeout(ctx, groupViewTimeout)
	defer cancel()
	return v.b.partitionOffsets(ctx, topic, p, ts)
}

func (v groupView) Bounds(ctx context.Context, topic string, p int32) (group.Bounds, error) {
	o, err := v.offsets(ctx, topic, p, nil)
	return group.Bounds{LogStartOffset: o.LogStartOffset, HighWatermark: o.HighWatermark, LogEndOffset: o.LogEndOffset}, err
}

func (v groupView) OffsetForTimestamp(ctx context.Context, topic string, p int32, ts int64) (int64, error) {
	o, err := v.offsets(ctx, topic, p, &ts)
	if err != nil {
		return 0, err
	}
	return *o.OffsetForTimestamp, nil
}

// partitionOffsets reads a partition's bounds from its leader: locally, or
// over the internal API of the broker that leads it.
func (b *Broker) partitionOffsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	t := b.image().Topic(topic)
	if t == nil {
		return partitionOffsets{}, fmt.Errorf("%w: %q", group.ErrUnknownTopic, topic)
	}
	if p < 0 || int(p) >= len(t.Partitions) {
		return partitionOffsets{}, fmt.Errorf("%w: %s-%d", group.ErrUnknownPartition, topic, p)
	}
	leader := int32(t.Partitions[p].Leader)
	if leader == b.id || leader < 0 {
		return b.localOffsets(ctx, topic, p, ts)
	}
	pc, err := b.peer(leader)
	if err != nil {
		return partitionOffsets{}, err
	}
	q := map[string]string{"topic": topic, "partition": strconv.Itoa(int(p))}
	if ts != nil {
		q["timestamp"] = strconv.FormatInt(*ts, 10)
	}
	var out partitionOffsets
	err = pc.Internal(ctx, http.MethodGet, internalOffsetsPath, q, &out)
	if err == nil && ts != nil && out.OffsetForTimestamp == nil {
		err = fmt.Errorf("broker %d did not answer the offset for a timestamp", leader)
	}
	return out, err
}

func (b *Broker) localOffsets(ctx context.Context, topic string, p int32, ts *int64) (partitionOffsets, error) {
	info, err := b.replicas.PartitionInfo(topic, p)
	if err != nil {
		return partitionOffsets{}, err
	}
	if !info.IsLeader {
		return partitionOffsets{}, &replica.NotLeaderError{Topic: topic, Partition: p, Leader: info.Leader, Epoch: info.LeaderEpoch}
	}
	out := partitionOffsets{LogStartOffset: info.LogStartOffset, HighWatermark: info.HighWatermark, LogEndOffset: info.LogEndOffset}
	if ts != nil {
		// The leader's time index, capped at the high watermark.
		off, err := b.replicas.OffsetForTimestamp(topic, p, *ts)
		if err != nil {
			return partitionOffsets{}, err
		}
		out.OffsetForTimestamp = &off
	}
	return out, nil
}

// serveOffsets is the internal handler of internalOffsetsPath.
func (b *Broker) serveOffsets(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := strconv.ParseInt(q.Get("partition"), 10, 32)
	if err != nil {
		writeInternalError(w, client.Errorf(client.CodeInvalidArgument, "partition: %v", err))
		return
	}
	var ts *int64
	if v := q.Get("timestamp"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeInternalError(w, client.Errorf(client.CodeInvalidArgument, "timestamp: %v", err))
			return
		}
		ts = &n
	}
	out, err := b.localOffsets(r.Context(), q.Get("topic"), int32(p), ts)
	if err != nil {
		writeInternalError(w, apiError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func writeInternalError(w http.ResponseWriter, err error) {
	ce, ok := err.(*client.Error)
	if !ok {
		ce = client.Errorf(client.CodeInternal, "%v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ce.Status)
	_ = json.NewEncoder(w).Encode(ce.Body())
}
