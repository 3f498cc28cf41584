package replica

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// imageLog drives broker/cluster's real metadata state machine without
// raft: commands are applied in order to an immutable Image and each new
// image is published to subscribers, as the cluster Node's FSM does.
type imageLog struct {
	mu    sync.Mutex
	img   atomic.Pointer[metadata.Image]
	index uint64
	subs  map[int]chan *metadata.Image
	next  int
}

func newImageLog() *imageLog {
	l := &imageLog{subs: map[int]chan *metadata.Image{}}
	l.img.Store(metadata.NewImage())
	return l
}

func (l *imageLog) Image() *metadata.Image { return l.img.Load() }
func (l *imageLog) CaughtUp() bool         { return true }

// MetadataLease always holds, for the latest image.
func (l *imageLog) MetadataLease() (uint64, bool) { return l.Image().Index, true }

func (l *imageLog) Subscribe() (<-chan *metadata.Image, func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan *metadata.Image, 1)
	id := l.next
	l.next++
	l.subs[id] = ch
	return ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.subs, id)
	}
}

func (l *imageLog) apply(cmd metadata.Command) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.index++
	img, err := l.img.Load().Apply(cmd, l.index)
	if err != nil {
		return err
	}
	l.img.Store(img)
	for _, ch := range l.subs {
		select { // keep only the newest image, as the Node does
		case <-ch:
		default:
		}
		ch <- img
	}
	return nil
}

// AlterISR is the controller side, as Node.AlterISR: validate, commit and
// return the committed partition.
func (l *imageLog) AlterISR(ctx context.Context, req metadata.AlterISR) (*metadata.Partition, error) {
	if err := l.apply(metadata.Command{Type: metadata.CmdAlterISR, AlterISR: &req}); err != nil {
		return nil, err
	}
	return l.Image().Partition(req.Topic, req.Partition), nil
}

// committedOnly answers like a broker that only learns "committed": the
// leader must then wait for the image to trust the new ISR.
func (l *imageLog) committedOnly(ctx context.Context, req AlterISRRequest) (PartitionState, error) {
	_, err := l.AlterISR(ctx, req.command())
	return PartitionState{}, err
}

func (l *imageLog) partition(topic string) *metadata.Partition {
	return l.Image().Partition(topic, 0)
}

// clusterBrokers starts three brokers on the real metadata state machine,
// registered with their addresses, and creates orders-0 on all three.
func clusterBrokers(t *testing.T, lag time.Duration, isr func(*imageLog) ISRChanger) (*imageLog, []*testBroker) {
	l := newImageLog()
	c := newMemCluster() // only the brokers' addresses are used
	bs := startBrokers(t, c, 3, func(cfg *Config) {
		cfg.Metadata = ClusterMetadata{Source: l}
		cfg.ISR = isr(l)
		cfg.ReplicaLagTimeMax = lag
	})
	for _, b := range bs {
		addr, _ := c.BrokerAddress(b.id)
		must(t, l.apply(metadata.Command{Type: metadata.CmdRegisterBroker,
			RegisterBroker: &metadata.RegisterBroker{ID: int(b.id), PeerAddress: addr, Voter: true}}))
	}
	must(t, l.apply(metadata.Command{Type: metadata.CmdCreateTopic, CreateTopic: &metadata.CreateTopic{
		Name: "orders", ID: "t1", Config: map[string]string{"min.insync.replicas": "2"},
		Assignments: [][]int{{0, 1, 2}},
	}}))
	waitLeader(t, bs[0], "orders")
	return l, bs
}

func TestClusterMetadataISRShrinkAndExpand(t *testing.T) {
	for name, isr := range map[string]func(*imageLog) ISRChanger{
		"answer carries the partition": func(l *imageLog) ISRChanger { return ClusterISR{Node: l} },
		"answer is only committed":     func(l *imageLog) ISRChanger { return ISRFunc(l.committedOnly) },
	} {
		t.Run(name, func(t *testing.T) { testClusterISRShrinkAndExpand(t, isr) })
	}
}

func testClusterISRShrinkAndExpand(t *testing.T, isr func(*imageLog) ISRChanger) {
	l, bs := clusterBrokers(t, time.Second, isr)
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	// A follower that stops fetching is shrunk away through the real
	// state machine's validation; acks=all goes on with two replicas.
	bs[2].stop(t)
	produce(t, bs[0], "orders", recordsOf("b", 5), AcksAll)
	if isr := l.partition("orders").ISR; !slices.Equal(isr, []int{0, 1}) {
		t.Fatalf("ISR after broker 2 stopped = %v, want [0 1]", isr)
	}
	bs[2].start(t)
	eventually(t, 5*time.Second, "broker 2 back in the ISR", func() bool {
		return slices.Equal(l.partition("orders").ISR, []int{0, 1, 2})
	})
	// When the answer only says "committed", the leader learns the new ISR
	// from the image, a moment after the image has it.
	eventually(t, 5*time.Second, "the leader to take the committed ISR", func() bool {
		i := info(t, bs[0], "orders")
		return len(i.ISR) == 3 && i.PartitionEpoch == int32(l.partition("orders").PartitionEpoch)
	})

	// Deleting the topic removes every replica's data.
	must(t, l.apply(metadata.Command{Type: metadata.CmdDeleteTopic, DeleteTopic: &metadata.DeleteTopic{Name: "orders"}}))
	eventually(t, 5*time.Second, "replicas deleted", func() bool {
		for _, b := range bs {
			if _, err := b.manager().PartitionInfo("orders", 0); err == nil {
				return false
			}
		}
		return true
	})
}

func TestClusterMetadataFencedLeaderRejoinsAsFollower(t *testing.T) {
	l, bs := clusterBrokers(t, DefaultReplicaLagTimeMax, func(l *imageLog) ISRChanger { return ClusterISR{Node: l} })
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)

	// Broker 0 writes what no follower fetches, then the controller
	// fences it (say it lost its session while still running): broker 1
	// is elected with a new epoch and broker 0 is told to follow it.
	bs[1].stop(t)
	bs[2].stop(t)
	produce(t, bs[0], "orders", recordsOf("lost", 3), AcksLeader)
	must(t, l.apply(metadata.Command{Type: metadata.CmdFenceBroker, Broker: &metadata.BrokerRef{ID: 0}}))
	if p := l.partition("orders"); p.Leader != 1 || slices.Contains(p.ISR, 0) {
		t.Fatalf("after fencing broker 0: leader %d ISR %v", p.Leader, p.ISR)
	}
	bs[1].start(t)
	bs[2].start(t)
	waitLeader(t, bs[1], "orders")
	produce(t, bs[1], "orders", recordsOf("new", 2), AcksAll)

	// Unfenced, it converges on the new leader and is added back.
	must(t, l.apply(metadata.Command{Type: metadata.CmdUnfenceBroker, Broker: &metadata.BrokerRef{ID: 0}}))
	eventually(t, 5*time.Second, "broker 0 to converge and rejoin the ISR", func() bool {
		return info(t, bs[0], "orders").LogEndOffset == 7 && len(l.partition("orders").ISR) == 3
	})
	want := []string{"a-0", "a-1", "a-2", "a-3", "a-4", "new-0", "new-1"}
	for _, b := range bs {
		if got := values(readAll(t, b, "orders")); !slices.Equal(got, want) {
			t.Errorf("broker %d log = %v, want %v", b.id, got, want)
		}
	}
	if lb, fb := segmentBytes(t, bs[1], "orders"), segmentBytes(t, bs[0], "orders"); string(lb) != string(fb) {
		t.Error("rejoined replica's bytes differ from the leader's")
	}
}

// TestUncommittedFetchWaitIsBounded: a consumer fetch of records that
// exist but are not committed waits for the high watermark, but no longer
// than the replica lag time, after which the leader would have shrunk the
// ISR; here the controller takes no ISR change, so the HW never moves and
// the fetch answers, empty, at that bound.
func TestUncommittedFetchWaitIsBounded(t *testing.T) {
	const lag = 500 * time.Millisecond
	_, bs := clusterBrokers(t, lag, func(*imageLog) ISRChanger {
		return ISRFunc(func(context.Context, AlterISRRequest) (PartitionState, error) {
			return PartitionState{}, errors.New("the controller is unavailable")
		})
	})
	produce(t, bs[0], "orders", recordsOf("a", 5), AcksAll)
	bs[1].stop(t)
	bs[2].stop(t)
	produce(t, bs[0], "orders", recordsOf("b", 3), AcksLeader)

	start := time.Now()
	res, err := bs[0].manager().Fetch(context.Background(), "orders", 0, 5, 1<<20, 0, 0)
	took := time.Since(start)
	if err != nil || len(res.Records) != 0 || res.HighWatermark != 5 || res.LogEndOffset != 8 {
		t.Fatalf("fetch at 5 (HW 5, LEO 8): %d records, HW %d, LEO %d, %v", len(res.Records), res.HighWatermark, res.LogEndOffset, err)
	}
	if took < lag-50*time.Millisecond || took > lag+time.Second {
		t.Fatalf("fetch of uncommitted records answered after %v, want about the replica lag time %v", took, lag)
	}

	// A longer wait of the request's own is kept.
	start = time.Now()
	if _, err := bs[0].manager().Fetch(context.Background(), "orders", 0, 5, 1<<20, 0, 2*lag); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 2*lag-50*time.Millisecond {
		t.Fatalf("fetch with wait %v answered after %v", 2*lag, took)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
