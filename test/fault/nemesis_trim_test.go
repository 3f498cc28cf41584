package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// trimmedTopic takes acks=all records while its oldest ones are deleted
// (DeleteRecords) through random brokers, and is read below the deletion
// point all along: no record below an acknowledged deletion may be served
// again, whichever broker leads.
const trimmedTopic = "trimmed"

// trimLoad is the trimmed topic's share of the nemesis load.
type trimLoad struct {
	mu sync.Mutex
	// acked maps each acknowledged value to its offset, end is the
	// largest acknowledged offset.
	acked map[string]acked
	end   int64
	// start is the largest low watermark a deletion was answered with:
	// every replica has deleted what is below it.
	start       int64
	deletions   int
	checked     int
	resurrected []string
}

func (l *nemesisLoad) produceTrimmed(ctx context.Context) {
	l.produceToPartition0(ctx, trimmedTopic, func() int64 { return 0 }, func(value string, offset int64) {
		l.trim.mu.Lock()
		l.trim.acked[value] = acked{0, offset}
		l.trim.end = max(l.trim.end, offset)
		l.trim.mu.Unlock()
	})
}

// trimTrimmed deletes the records of trimmedTopic below a random offset
// between the last deletion and the last acknowledged record, every few
// hundred milliseconds.
func (l *nemesisLoad) trimTrimmed(ctx context.Context) {
	for pause(ctx, 300*time.Millisecond) {
		l.trim.mu.Lock()
		offset := l.trim.start + rand.Int64N(max(l.trim.end-l.trim.start, 0)+1)
		l.trim.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := l.any().DeleteRecords(rctx, trimmedTopic, []api.PartitionRecordsDeletion{{Partition: 0, Offset: offset}})
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.replies.note("delete-records "+trimmedTopic, err)
		if err == nil && len(out) == 1 && out[0].LowWatermark != nil {
			l.trim.mu.Lock()
			l.trim.start = max(l.trim.start, *out[0].LowWatermark)
			l.trim.deletions++
			l.trim.mu.Unlock()
		}
	}
}

// watchTrimmed fetches trimmedTopic from below the acknowledged deletion
// point through random brokers: every record served below it, deleted
// before the fetch was sent, is resurrected.
func (l *nemesisLoad) watchTrimmed(ctx context.Context) {
	for pause(ctx, 100*time.Millisecond) {
		l.trim.mu.Lock()
		start := l.trim.start
		l.trim.mu.Unlock()
		if start == 0 {
			continue
		}
		from := rand.Int64N(start)
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := l.any().Fetch(rctx, client.FetchRequest{Topic: trimmedTopic, Partition: 0, Offset: from, MaxRecords: 50})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if api.IsCode(err, api.CodeOffsetOutOfRange) {
			err = nil // what a fetch below the log start gets
		}
		l.replies.note("fetch "+trimmedTopic, err)
		if err != nil {
			continue
		}
		l.trim.mu.Lock()
		l.trim.checked++
		for _, r := range resp.Records {
			if r.Offset < start {
				l.trim.resurrected = append(l.trim.resurrected, fmt.Sprintf("%s at offset %d, below the log start %d acknowledged before the fetch",
					r.Message, r.Offset, start))
			}
		}
		l.trim.mu.Unlock()
	}
}
