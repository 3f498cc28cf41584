package replica

import (
	"encoding/json"
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
	p, err := m.partition(r.URL.Query().Get("topic"), partition)
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
	p, err := m.partition(r.URL.Query().Get("topic"), partition)
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
