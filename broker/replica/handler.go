package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
)

// ServePeer registers the replica operations (protocol.go) on a broker's
// peer listener.
func (m *Manager) ServePeer(mux *peer.Mux) {
	peer.Handle(mux, opFetch, m.serveFetch)
	peer.Handle(mux, opEpochEnd, m.serveEpochEnd)
}

func (m *Manager) serveFetch(ctx context.Context, r fetchRequest) (fetchReply, error) {
	if r.FetchOffset < 0 || r.MaxBytes < 0 {
		return fetchReply{}, encodeError(fmt.Errorf("%w: fetch_offset %d, max_bytes %d", errInvalidArgument, r.FetchOffset, r.MaxBytes))
	}
	p, err := m.awaitEpoch(ctx, r.Topic, r.TopicID, r.Partition, r.LeaderEpoch)
	if err != nil {
		return fetchReply{}, encodeError(err)
	}
	wait := min(time.Duration(max(r.WaitMs, 0))*time.Millisecond, maxFetchWait)
	res, err := p.serveFollower(ctx, r.ReplicaID, r.LeaderEpoch, r.FetchOffset, r.MaxBytes, wait)
	if err != nil {
		return fetchReply{}, encodeError(err)
	}
	return fetchReply{HighWatermark: res.HighWatermark, LogStartOffset: res.LogStartOffset,
		LogEndOffset: res.LogEndOffset, LeaderEpoch: res.LeaderEpoch, Batches: res.Batches}, nil
}

func (m *Manager) serveEpochEnd(ctx context.Context, r epochEndRequest) (epochEndResponse, error) {
	p, err := m.awaitEpoch(ctx, r.Topic, r.TopicID, r.Partition, r.LeaderEpoch)
	if err != nil {
		return epochEndResponse{}, encodeError(err)
	}
	e, end, err := p.endOffsetForEpoch(r.LeaderEpoch, r.Epoch)
	if err != nil {
		return epochEndResponse{}, encodeError(err)
	}
	return epochEndResponse{Epoch: e, EndOffset: end}, nil
}

// epochCatchUpWait bounds how long a follower's request waits for this
// broker to learn the leader epoch it names.
const epochCatchUpWait = time.Second

// awaitEpoch returns the hosted partition once this broker has applied
// leader epoch epoch (or a newer one) to it, and hosts it under topic id
// topicID. Metadata reaches brokers a few milliseconds apart, and a
// follower often learns of a new leadership — or of a topic created again
// under the same name — before its leader does: answering it
// UNKNOWN_LEADER_EPOCH, INCONSISTENT_TOPIC_ID or NOT_LEADER at once would
// make it back off (fetchBackoff) and hold up the first acks=all produce of
// every new leadership by that much. After epochCatchUpWait, or when ctx
// ends, it returns what m.partition says, or ErrInconsistentTopicID for a
// replica of another topic id, and the request fails.
func (m *Manager) awaitEpoch(ctx context.Context, topic, topicID string, partition, epoch int32) (*partition, error) {
	t := time.NewTimer(epochCatchUpWait)
	defer t.Stop()
	for {
		// Take the channel first, so a change applied between the check
		// and the wait still wakes it.
		m.reconciledMu.Lock()
		ch := m.reconciled.wait()
		m.reconciledMu.Unlock()
		p, err := m.partition(topic, partition)
		if err == nil && !p.sameTopic(topicID) {
			err = fmt.Errorf("%w: %s-%d is topic id %s here, %s at the requester", ErrInconsistentTopicID, topic, partition, p.TopicID(), topicID)
		}
		if err == nil && p.knowsEpoch(epoch) || errors.Is(err, ErrClosed) {
			return p, err
		}
		if ok, werr := waitFor(ctx, ch, t); werr != nil || !ok {
			return p, err
		}
	}
}
