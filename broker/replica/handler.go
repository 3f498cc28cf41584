package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Handler returns the internal replica API (see protocol.go). The broker
// mounts it so that requests keep their full /internal/replica/... path.
func (m *Manager) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathFetch, m.handleFetch)
	mux.HandleFunc("GET "+pathEpochEnd, m.handleEpochEnd)
	return mux
}

// params reads the integer query parameters of an internal request.
type params struct {
	r   *http.Request
	err error
}

func (p *params) int(name string, bits int) int64 {
	if p.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(p.r.URL.Query().Get(name), 10, bits)
	if err != nil {
		p.err = fmt.Errorf("%w: %s: %v", errInvalidArgument, name, err)
	}
	return v
}

func writeError(w http.ResponseWriter, err error) {
	status, body := encodeError(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func (m *Manager) handleFetch(w http.ResponseWriter, r *http.Request) {
	q := params{r: r}
	partition := int32(q.int("partition", 32))
	replicaID := int32(q.int("replica_id", 32))
	epoch := int32(q.int("leader_epoch", 32))
	offset := q.int("fetch_offset", 64)
	maxBytes := int(q.int("max_bytes", 32))
	waitMs := q.int("wait_ms", 32)
	if q.err != nil {
		writeError(w, q.err)
		return
	}
	p, err := m.awaitEpoch(r.Context(), r.URL.Query().Get("topic"), r.URL.Query().Get("topic_id"), partition, epoch)
	if err != nil {
		writeError(w, err)
		return
	}
	wait := min(time.Duration(max(waitMs, 0))*time.Millisecond, maxFetchWait)
	res, err := p.serveFollower(r.Context(), replicaID, epoch, offset, maxBytes, wait)
	if err != nil {
		writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set(headerHW, strconv.FormatInt(res.HighWatermark, 10))
	h.Set(headerLogStart, strconv.FormatInt(res.LogStartOffset, 10))
	h.Set(headerLogEnd, strconv.FormatInt(res.LogEndOffset, 10))
	h.Set(headerEpoch, strconv.Itoa(int(res.LeaderEpoch)))
	h.Set("Content-Length", strconv.Itoa(len(res.Batches)))
	w.WriteHeader(http.StatusOK)
	w.Write(res.Batches)
}

func (m *Manager) handleEpochEnd(w http.ResponseWriter, r *http.Request) {
	q := params{r: r}
	partition := int32(q.int("partition", 32))
	epoch := int32(q.int("leader_epoch", 32))
	requested := int32(q.int("epoch", 32))
	if q.err != nil {
		writeError(w, q.err)
		return
	}
	p, err := m.awaitEpoch(r.Context(), r.URL.Query().Get("topic"), r.URL.Query().Get("topic_id"), partition, epoch)
	if err != nil {
		writeError(w, err)
		return
	}
	e, end, err := p.endOffsetForEpoch(epoch, requested)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(epochEndResponse{Epoch: e, EndOffset: end})
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
