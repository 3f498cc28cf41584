package fault

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/client"
)

// TestProducesQueuedForAFrozenLeaderMoveOn: a partition's leader is frozen
// (SIGSTOP), so it keeps its connections open and answers nothing. Twelve
// acks=all produces then sent, 20 ms apart, to another broker, which
// passes them on to that leader: the first two go out and hang (at most
// two requests are in flight per leader), the others wait behind them.
// Once the controller moves the leadership, the waiting ones must go to
// the new leader and be acknowledged, not wait out the hung requests'
// timeout (40 s) and then be sent to the frozen broker.
func TestProducesQueuedForAFrozenLeaderMoveOn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the broker and runs three processes")
	}
	procs := newCluster(t, 3, "offsets.topic.num.partitions=1\n")
	startAll(t, procs)
	const topic = "payments"
	createReplicatedTopic(t, procs, topic, 1)
	waitISR(t, procs, topic, 3)
	leader, _ := partitionLeadership(t, procs, topic)
	via := procs[(leader+1)%3]
	partition := int32(0)
	produce := func(i int) (*client.ProduceResponse, error) {
		return via.client.Produce(context.Background(), client.ProduceRequest{Topic: topic, Partition: &partition,
			Message: fmt.Sprintf("record-%d", i), Acks: client.AcksAll, TimeoutMs: 30_000})
	}
	// Through via once it knows the topic and its leader.
	eventually(t, time.Minute, "a produce through broker "+fmt.Sprint(via.id)+" before the freeze", func() bool {
		_, err := produce(-1)
		return err == nil
	})

	procs[leader].pause(t)
	frozen := time.Now()
	type outcome struct {
		offset int64
		err    error
		after  time.Duration
	}
	outcomes := make(chan outcome, 12)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			res, err := produce(i)
			o := outcome{err: err, after: time.Since(frozen)}
			if err == nil && res.Offset != nil {
				o.offset = *res.Offset
			}
			outcomes <- o
		})
		time.Sleep(20 * time.Millisecond)
	}

	acked, offsets := 0, map[int64]bool{}
	deadline := time.After(20 * time.Second)
wait:
	for range 12 {
		select {
		case o := <-outcomes:
			if o.err != nil {
				t.Logf("a produce answered after %v: %v", o.after.Round(time.Millisecond), o.err)
				continue
			}
			if offsets[o.offset] {
				t.Fatalf("two produces acknowledged at offset %d", o.offset)
			}
			offsets[o.offset] = true
			acked++
		case <-deadline:
			break wait
		}
	}
	t.Logf("%d of 12 produces sent through broker %d after leader %d froze acknowledged within 20 s", acked, via.id, leader)
	procs[leader].resume(t)
	wg.Wait()
	if acked < 8 {
		t.Fatalf("%d of the 12 produces were acknowledged within 20 s of the freeze; at most the first two may wait on the frozen leader", acked)
	}
}
