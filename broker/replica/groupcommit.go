package replica

import (
	"sync"

	"github.com/kairolog/kairolog/broker/storage"
)

// Group commit: produces to one partition that arrive while the leader
// writes wait in a queue, and the next write takes all of them — one
// write(2) and, with flush.messages or flush.ms, one fsync for the group
// (storage's AppendMany). Each produce remains its own batch with its own
// offsets, so nothing a consumer or a follower sees changes; only the
// number of system calls does. A produce that finds no write in progress
// writes at once, alone: group commit adds no wait of its own.
//
// The writer's role passes along the queue: the produce that wrote a group
// hands it to the first produce queued meanwhile and returns, so no
// producer keeps writing for others while its own answer is ready.

// appendQueue is a partition's queue of produces waiting to be written.
type appendQueue struct {
	mu      sync.Mutex
	waiting []*appendRequest
	writing bool // a produce is writing a group
}

// appendRequest is one produce in the queue. done is closed once its
// results are set, or once it is to write the next group (lead).
type appendRequest struct {
	batch Batch
	done  chan struct{}
	lead  bool

	res   storage.AppendResult
	epoch int32
	err   error
}

// appendGrouped writes batch, in a group with whatever other produces are
// queued, and returns where it went.
func (p *partition) appendGrouped(batch Batch) (res storage.AppendResult, epoch int32, err error) {
	req := &appendRequest{batch: batch, done: make(chan struct{})}
	q := &p.appends
	q.mu.Lock()
	q.waiting = append(q.waiting, req)
	lead := !q.writing
	q.writing = true
	q.mu.Unlock()
	if !lead {
		<-req.done
		lead = req.lead
	}
	if lead {
		p.writeQueued(req)
	}
	return req.res, req.epoch, req.err
}

// writeQueued writes everything queued as one group, answers the group's
// produces, and hands the writer's role to the first produce queued since,
// if any. self is the produce doing the writing.
func (p *partition) writeQueued(self *appendRequest) {
	q := &p.appends
	q.mu.Lock()
	group := q.waiting
	q.waiting = nil
	q.mu.Unlock()

	p.writeGroup(group)
	for _, r := range group {
		if r != self {
			close(r.done)
		}
	}

	q.mu.Lock()
	if len(q.waiting) == 0 {
		q.writing = false
		q.mu.Unlock()
		return
	}
	next := q.waiting[0]
	next.lead = true
	q.mu.Unlock()
	close(next.done)
}

// writeGroup appends each produce's records as its own batch, stamped with
// the current leader epoch, in one storage write.
func (p *partition) writeGroup(group []*appendRequest) {
	// roleMu (read) keeps the role and epoch fixed while storage appends.
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	if p.closed || p.role != roleLeader {
		err := p.notLeaderLocked()
		p.mu.Unlock()
		for _, r := range group {
			r.err = err
		}
		return
	}
	epoch := p.state.LeaderEpoch
	p.mu.Unlock()

	results, errs := p.appendInOrder(group, epoch)
	var bytesIn, recordsIn int64
	for i, r := range group {
		r.epoch = epoch
		if errs[i] != nil {
			r.err = p.checkLog(errs[i])
			continue
		}
		r.res = results[i]
		if r.res.Duplicate {
			continue // a producer's retry: nothing was written
		}
		bytesIn += int64(len(r.batch.Encoded) + len(r.batch.Section))
		for _, rec := range r.batch.Records {
			bytesIn += int64(len(rec.Key) + len(rec.Value))
		}
		recordsIn += r.res.LastOffset - r.res.BaseOffset + 1
	}
	p.stats.bytesIn.Add(bytesIn)
	p.stats.recordsIn.Add(recordsIn)

	p.mu.Lock()
	p.notifySessionsLocked()
	p.maybeAdvanceHWLocked()
	p.mu.Unlock()
}

// appendInOrder writes the group's batches in queue order: each run of
// record sets in one AppendMany, each batch a Kafka producer encoded with
// AppendBatch, which stores it as it came.
func (p *partition) appendInOrder(group []*appendRequest, epoch int32) ([]storage.AppendResult, []error) {
	results := make([]storage.AppendResult, len(group))
	errs := make([]error, len(group))
	for i := 0; i < len(group); {
		if group[i].batch.Encoded != nil {
			results[i], errs[i] = p.log.AppendBatch(group[i].batch.Encoded, epoch)
			i++
			continue
		}
		j := i
		var sets []storage.RecordSet
		for ; j < len(group) && group[j].batch.Encoded == nil; j++ {
			b := &group[j].batch
			sets = append(sets, storage.RecordSet{Records: b.Records, Section: b.Section, Count: b.Count, Options: b.Options})
		}
		res, es := p.log.AppendMany(sets, epoch)
		copy(results[i:j], res)
		copy(errs[i:j], es)
		i = j
	}
	return results, errs
}
