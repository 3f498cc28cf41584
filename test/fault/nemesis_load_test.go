package fault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// The nemesis test's load: acks=all producers and consumers on a topic that
// lives throughout, a producer of records with old timestamps on a topic
// whose retention deletes them, and a topic deleted and created again
// over and over under its own producer and consumer. Every request goes
// to a broker picked at random, so requests also reach the broker the
// nemesis is holding, and queue there.

const (
	mainTopic  = "nemesis"
	agedTopic  = "aged"
	churnTopic = "churn"
	// mainPartitions is the partition count of mainTopic.
	mainPartitions = 2
)

// replies counts the answers the brokers gave: a reply of 5xx other than a
// retriable 503 is a broken promise of the API; a request that got no reply
// (the broker was killed or paused past the deadline) is not a reply.
type replies struct {
	ok, unavailable, noReply atomic.Int64
	mu                       sync.Mutex
	bad                      []string // 5xx other than 503, with what was asked
}

func (r *replies) note(what string, err error) {
	var ce *api.Error
	switch {
	case err == nil:
		r.ok.Add(1)
	case errors.As(err, &ce) && ce.Status == 503 && ce.Retriable():
		r.unavailable.Add(1)
	case errors.As(err, &ce) && ce.Status >= 500:
		r.mu.Lock()
		r.bad = append(r.bad, fmt.Sprintf("%s: %v", what, err))
		r.mu.Unlock()
	case errors.As(err, &ce):
		r.ok.Add(1) // a 4xx is an answer (offset out of range while a topic is re-created, …)
	default:
		r.noReply.Add(1)
	}
}

// acked is where an acknowledged record was stored.
type acked struct {
	partition int32
	offset    int64
}

// nemesisLoad runs the load and keeps what it learnt.
type nemesisLoad struct {
	procs   []*brokerProc
	replies *replies

	mu sync.Mutex
	// main and aged map each acknowledged value to where it was stored;
	// mainEnd is the largest acknowledged offset of each main partition.
	main, aged map[string]acked
	mainEnd    [mainPartitions]int64
	// churn: the acknowledged values of each incarnation (generation) of
	// churnTopic, and those of the deleted ones with when the deletion
	// was acknowledged.
	churnGen      int
	churnAcked    map[string]int64
	deletedAcked  map[string]time.Time
	churnLost     int
	churnDup      int
	resurrected   []string
	misplaced     []string // a main-topic record served at another offset than acknowledged
	startPastHW   []string // a log start offset seen above the high watermark
	stuck         []string // a churn step that did not succeed within retryFor
	churnRounds   int
	churnAckedSum int

	trim trimLoad

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newNemesisLoad(procs []*brokerProc) *nemesisLoad {
	return &nemesisLoad{procs: procs, replies: &replies{}, main: map[string]acked{}, aged: map[string]acked{},
		churnAcked: map[string]int64{}, deletedAcked: map[string]time.Time{}, trim: trimLoad{acked: map[string]acked{}}}
}

// any picks a broker at random, running or not: a paused broker's queued
// requests are part of the test.
func (l *nemesisLoad) any() *client.Client {
	return l.procs[rand.IntN(len(l.procs))].client
}

func (l *nemesisLoad) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for i := range 3 {
		l.wg.Go(func() { l.produceMain(ctx, i) })
	}
	l.wg.Go(func() { l.consumeMain(ctx) })
	l.wg.Go(func() { l.produceAged(ctx) })
	l.wg.Go(func() { l.watchAged(ctx) })
	l.wg.Go(func() { l.churn(ctx) })
	l.wg.Go(func() { l.consumeChurn(ctx) })
	l.wg.Go(func() { l.produceTrimmed(ctx) })
	l.wg.Go(func() { l.trimTrimmed(ctx) })
	l.wg.Go(func() { l.watchTrimmed(ctx) })
}

func (l *nemesisLoad) stop() {
	l.cancel()
	l.wg.Wait()
}

// pause waits d or until ctx ends, and reports whether to go on.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func (l *nemesisLoad) produceMain(ctx context.Context, id int) {
	for seq := 0; ctx.Err() == nil; seq++ {
		part := int32(seq % mainPartitions)
		value := fmt.Sprintf("main-%d-%d", id, seq)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := l.any().Produce(rctx, client.ProduceRequest{Topic: mainTopic, Partition: &part, Message: value,
			Acks: client.AcksAll, TimeoutMs: 5000})
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("produce "+mainTopic, err)
		if err == nil && resp.Offset != nil {
			l.mu.Lock()
			l.main[value] = acked{part, *resp.Offset}
			l.mainEnd[part] = max(l.mainEnd[part], *resp.Offset)
			l.mu.Unlock()
		} else if !pause(ctx, 20*time.Millisecond) {
			return
		}
	}
}

// consumeMain reads the main topic from random offsets through random
// brokers: an acknowledged record must be where it was acknowledged.
func (l *nemesisLoad) consumeMain(ctx context.Context) {
	for ctx.Err() == nil {
		part := int32(rand.IntN(mainPartitions))
		l.mu.Lock()
		from := rand.Int64N(l.mainEnd[part] + 1)
		l.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := l.any().Fetch(rctx, client.FetchRequest{Topic: mainTopic, Partition: part, Offset: from, MaxRecords: 200})
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("fetch "+mainTopic, err)
		if err == nil {
			l.mu.Lock()
			for _, r := range resp.Records {
				if a, ok := l.main[r.Message]; ok && (a.partition != part || a.offset != r.Offset) {
					l.misplaced = append(l.misplaced, fmt.Sprintf("%s acknowledged at %d/%d, served at %d/%d",
						r.Message, a.partition, a.offset, part, r.Offset))
				}
			}
			l.mu.Unlock()
		}
		if !pause(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// produceAged writes records stamped two days ago to agedTopic, whose
// retention (one hour) deletes each segment once every in-sync replica
// holds it.
func (l *nemesisLoad) produceAged(ctx context.Context) {
	l.produceToPartition0(ctx, agedTopic, func() int64 { return time.Now().Add(-48 * time.Hour).UnixMilli() },
		func(value string, offset int64) {
			l.mu.Lock()
			l.aged[value] = acked{0, offset}
			l.mu.Unlock()
		})
}

// produceToPartition0 writes numbered records to partition 0 of topic with
// acks=all, each stamped with stamp (0: now), until ctx ends, and hands
// each acknowledged one to acknowledged.
func (l *nemesisLoad) produceToPartition0(ctx context.Context, topic string, stamp func() int64, acknowledged func(value string, offset int64)) {
	part := int32(0)
	for seq := 0; ctx.Err() == nil; seq++ {
		value := fmt.Sprintf("%s-%d", topic, seq)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := l.any().Produce(rctx, client.ProduceRequest{Topic: topic, Partition: &part, Message: value,
			Timestamp: stamp(), Acks: client.AcksAll, TimeoutMs: 5000})
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("produce "+topic, err)
		if err == nil && resp.Offset != nil {
			acknowledged(value, *resp.Offset)
		}
		if !pause(ctx, 20*time.Millisecond) {
			return
		}
	}
}

// watchAged checks, as retention runs, that the log start of agedTopic
// never passes its high watermark.
func (l *nemesisLoad) watchAged(ctx context.Context) {
	for pause(ctx, 200*time.Millisecond) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := l.any().DescribeTopic(rctx, agedTopic)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("describe "+agedTopic, err)
		if err != nil {
			continue
		}
		for _, p := range d.Partitions {
			if p.LogStartOffset > p.HighWatermark {
				l.mu.Lock()
				l.startPastHW = append(l.startPastHW, fmt.Sprintf("%s-%d: log start %d, high watermark %d",
					agedTopic, p.Partition, p.LogStartOffset, p.HighWatermark))
				l.mu.Unlock()
			}
		}
	}
}

// churn creates churnTopic, produces 20 records to it with acks=all,
// checks that each acknowledged one is at its offset exactly once,
// deletes the topic, and starts over, for as long as the test runs.
func (l *nemesisLoad) churn(ctx context.Context) {
	for gen := 1; ctx.Err() == nil; gen++ {
		if !l.retry(ctx, "create "+churnTopic, func(c *client.Client, rctx context.Context) error {
			_, err := c.CreateTopic(rctx, api.CreateTopicRequest{Name: churnTopic, Partitions: 1, ReplicationFactor: 3,
				Config: map[string]string{"min.insync.replicas": "2"}})
			if api.IsCode(err, api.CodeTopicAlreadyExists) {
				return nil // created by an attempt whose answer was lost
			}
			return err
		}) {
			return
		}
		l.mu.Lock()
		l.churnGen, l.churnAcked = gen, map[string]int64{}
		l.mu.Unlock()
		part := int32(0)
		for i := 0; i < 20 && ctx.Err() == nil; i++ {
			value := fmt.Sprintf("churn-%d-%d", gen, i)
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			resp, err := l.any().Produce(rctx, client.ProduceRequest{Topic: churnTopic, Partition: &part, Message: value,
				Acks: client.AcksAll, TimeoutMs: 5000})
			cancel()
			if ctx.Err() != nil {
				return
			}
			l.replies.note("produce "+churnTopic, err)
			if err == nil && resp.Offset != nil {
				l.mu.Lock()
				l.churnAcked[value] = *resp.Offset
				l.mu.Unlock()
			}
		}
		l.checkChurn(ctx)
		if !l.retry(ctx, "delete "+churnTopic, func(c *client.Client, rctx context.Context) error {
			err := c.DeleteTopic(rctx, churnTopic)
			if api.IsCode(err, api.CodeUnknownTopic) {
				return nil // deleted by an attempt whose answer was lost
			}
			return err
		}) {
			return
		}
		deleted := time.Now()
		l.mu.Lock()
		for v := range l.churnAcked {
			l.deletedAcked[v] = deleted
		}
		l.churnRounds++
		l.churnAckedSum += len(l.churnAcked)
		l.churnAcked = map[string]int64{}
		l.mu.Unlock()
	}
}

// checkChurn reads the current incarnation of churnTopic from offset 0 and
// counts the acknowledged records that are not there exactly once.
func (l *nemesisLoad) checkChurn(ctx context.Context) {
	var recs []client.FetchedRecord
	if !l.retry(ctx, "fetch "+churnTopic, func(c *client.Client, rctx context.Context) error {
		resp, err := c.Fetch(rctx, client.FetchRequest{Topic: churnTopic, Partition: 0, Offset: 0, MaxRecords: 100})
		if err == nil {
			recs = resp.Records
		}
		return err
	}) {
		return
	}
	count := map[string]int{}
	at := map[int64]string{}
	for _, r := range recs {
		count[r.Message]++
		at[r.Offset] = r.Message
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for v, off := range l.churnAcked {
		switch {
		case at[off] != v:
			l.churnLost++
		case count[v] > 1:
			l.churnDup++
		}
	}
}

// consumeChurn reads churnTopic from offset 0 through random brokers: a
// record acknowledged in an incarnation deleted before the fetch was sent
// is a resurrected record.
func (l *nemesisLoad) consumeChurn(ctx context.Context) {
	for pause(ctx, 30*time.Millisecond) {
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := l.any().Fetch(rctx, client.FetchRequest{Topic: churnTopic, Partition: 0, Offset: 0, MaxRecords: 100})
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("fetch "+churnTopic, err)
		if err != nil {
			continue
		}
		l.mu.Lock()
		for _, r := range resp.Records {
			if deleted, ok := l.deletedAcked[r.Message]; ok && sent.After(deleted) {
				l.resurrected = append(l.resurrected, fmt.Sprintf("%s at offset %d, high watermark %d (its topic was deleted %v before the fetch)",
					r.Message, r.Offset, resp.HighWatermark, sent.Sub(deleted).Round(time.Millisecond)))
			}
		}
		l.mu.Unlock()
	}
}

// retryFor bounds how long a call of the churn is retried: brokers that
// have just learnt of a topic, or of its deletion, may answer
// UNKNOWN_TOPIC or NOT_READY for a moment, but not for a minute.
const retryFor = time.Minute

// retry runs a call through random brokers until it succeeds, ctx ends or
// retryFor passes (then the call is recorded as stuck); it reports success.
func (l *nemesisLoad) retry(ctx context.Context, what string, call func(*client.Client, context.Context) error) bool {
	deadline := time.Now().Add(retryFor)
	var err error
	for ctx.Err() == nil && time.Now().Before(deadline) {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = call(l.any(), rctx)
		cancel()
		if ctx.Err() != nil {
			return false
		}
		l.replies.note(what, err)
		if err == nil {
			return true
		}
		if !pause(ctx, 100*time.Millisecond) {
			return false
		}
	}
	if ctx.Err() == nil {
		l.mu.Lock()
		l.stuck = append(l.stuck, fmt.Sprintf("%s failed for %v: %v", what, retryFor, err))
		l.mu.Unlock()
	}
	return false
}
