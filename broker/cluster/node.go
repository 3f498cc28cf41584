package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/kairolog/kairolog/broker/cluster/metadata"
)

// Node is one broker's member of the metadata quorum. On the raft leader
// it also runs the controller.
type Node struct {
	cfg  Config
	log  *slog.Logger
	raft *raft.Raft
	fsm  *fsm

	transport *raft.NetworkTransport
	store     *raftboltdb.BoltStore

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// hadState is whether raft state existed at start (no join needed).
	hadState bool
	// epoch is this broker's registration epoch, 0 until registered.
	epoch atomic.Uint64
	// registeredAt is the raft index of the latest registration; the
	// broker is caught up once it has applied it.
	registeredAt atomic.Uint64
	// incarnation identifies this process to the controller, which tells a
	// restarted broker's registration from a repeated one by it.
	incarnation string
	caughtUp    atomic.Bool
	// removed is set when the controller refuses the registration of a
	// broker that registered earlier in this process: it was removed from
	// the cluster while running (see membership).
	removed atomic.Bool

	// lease says whether this broker's metadata is known to be current
	// (lease.go).
	lease metadataLease

	ctlMu sync.Mutex
	ctl   *controller // non-nil while this node leads
	// adminMu serialises the controller's plan-then-propose operations.
	adminMu sync.Mutex
	// announce asks the announcer to tell followers about new commits
	// (commit.go).
	announce chan struct{}
}

// Start opens the metadata quorum under cfg.DataDir/metadata and joins it:
// an initial voter with no raft state bootstraps the configuration of
// cfg.InitialVoters (identical on every voter, so the bootstraps agree);
// a broker with raft state never bootstraps again; any other broker joins
// as a non-voter through the controller. Start returns at once; Ready
// tells when the broker has registered and caught up.
func Start(cfg Config) (*Node, error) {
	n, err := start(cfg)
	if err != nil && cfg.RaftListener != nil {
		_ = cfg.RaftListener.Close() // unless the transport closed it already
	}
	return n, err
}

func start(cfg Config) (*Node, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	dir := filepath.Join(cfg.DataDir, "metadata")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger.With("component", "cluster", "broker", cfg.BrokerID), fsm: newFSM(),
		incarnation: uuid.NewString(), announce: make(chan struct{}, 1)}
	rlog := hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("raft-%d", cfg.BrokerID),
		Level: hclog.LevelFromString(cfg.RaftLogLevel), Output: cfg.RaftLogOutput})

	var err error
	if n.store, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")}); err != nil {
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, rlog)
	if err != nil {
		n.store.Close()
		return nil, fmt.Errorf("open raft snapshots: %w", err)
	}
	ln := cfg.RaftListener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.RaftListen); err != nil {
			n.store.Close()
			return nil, fmt.Errorf("raft listen: %w", err)
		}
	}
	n.transport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  &streamLayer{Listener: cfg.RaftTLS.Listener(ln), advertise: advertisedAddr(cfg.RaftAdvertise), tls: cfg.RaftTLS},
		MaxPool: 3, Timeout: 5 * time.Second, Logger: rlog,
	})
	if n.hadState, err = raft.HasExistingState(n.store, n.store, snaps); err != nil {
		n.closeStores()
		return nil, err
	}
	if n.raft, err = raft.NewRaft(raftConfig(cfg, rlog), n.fsm, n.store, n.store, snaps, n.transport); err != nil {
		n.closeStores()
		return nil, err
	}
	if !n.hadState && cfg.initialVoter() {
		if err := n.raft.BootstrapCluster(n.bootstrapConfiguration()).Error(); err != nil &&
			!errors.Is(err, raft.ErrCantBootstrap) {
			n.Close()
			return nil, fmt.Errorf("bootstrap metadata quorum: %w", err)
		}
	}
	if err := n.electIfSoleVoter(); err != nil {
		n.Close()
		return nil, fmt.Errorf("start the election of a sole voter: %w", err)
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.wg.Add(4)
	go n.watchLeadership()
	go n.membership()
	go n.watchStalls()
	go n.announcer()
	return n, nil
}

// raftConfig tunes raft for fast failover: a follower that hears nothing
// for RaftHeartbeatTimeout (randomised up to twice that) starts an
// election, and a candidate without a majority retries after
// RaftElectionTimeout (randomised likewise; longer, so that split votes
// resolve). The leader steps down after a heartbeat timeout without
// hearing from a quorum: a shorter lease made leaders step down on busy
// machines, where a scheduling stall of a few hundred milliseconds is common.
// Followers learn of commits from the leader's announcements; the commit
// timeout is only their backstop (commit.go).
func raftConfig(cfg Config, logger hclog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(strconv.Itoa(cfg.BrokerID))
	rc.HeartbeatTimeout = cfg.RaftHeartbeatTimeout
	rc.ElectionTimeout = cfg.RaftElectionTimeout
	rc.LeaderLeaseTimeout = cfg.RaftHeartbeatTimeout
	rc.CommitTimeout = cfg.raftCommitTimeout
	rc.SnapshotThreshold = 4096
	rc.Logger = logger
	return rc
}

func (n *Node) bootstrapConfiguration() raft.Configuration {
	voters := n.cfg.InitialVoters
	if len(voters) == 0 {
		voters = []Voter{{ID: n.cfg.BrokerID, Address: n.cfg.RaftAdvertise}}
	}
	var c raft.Configuration
	for _, v := range voters {
		c.Servers = append(c.Servers, raft.Server{Suffrage: raft.Voter,
			ID: raft.ServerID(strconv.Itoa(v.ID)), Address: raft.ServerAddress(v.Address)})
	}
	return c
}

// Close leaves the quorum for now (not for good: see RemoveBroker). A
// controller first hands raft leadership to another voter so the cluster
// does not wait for an election timeout.
func (n *Node) Close() error { return n.shutdown(true) }

// shutdown stops the node; without handover it stops as abruptly as a
// crash would (tests use that to measure failover).
func (n *Node) shutdown(handover bool) error {
	if n.cancel != nil {
		n.cancel()
	}
	if handover && n.raft != nil && n.raft.State() == raft.Leader {
		_ = n.raft.LeadershipTransfer().Error()
	}
	n.wg.Wait()
	var err error
	if n.raft != nil {
		err = n.raft.Shutdown().Error()
	}
	n.closeStores()
	return err
}

func (n *Node) closeStores() {
	if n.transport != nil {
		n.transport.Close()
	}
	if n.store != nil {
		n.store.Close()
	}
}

// ID returns this broker's id.
func (n *Node) ID() int { return n.cfg.BrokerID }

// Image returns the current metadata image. It is immutable: keep it as
// long as needed, change nothing in it.
func (n *Node) Image() *metadata.Image { return n.fsm.img.Load() }

// Subscribe returns a channel that always holds the newest image not yet
// received (older ones are skipped, never queued) and a function that
// ends the subscription. Compare against the last image you handled.
func (n *Node) Subscribe() (<-chan *metadata.Image, func()) { return n.fsm.subscribe() }

// ControllerID returns the id of the current controller, or -1 when the
// quorum has no leader this broker knows of.
func (n *Node) ControllerID() int {
	_, id := n.raft.LeaderWithID()
	v, err := strconv.Atoi(string(id))
	if err != nil || id == "" {
		return -1
	}
	return v
}

// IsController reports whether this broker is the controller.
func (n *Node) IsController() bool { return n.raft.State() == raft.Leader }

// CaughtUp reports whether this broker has registered and applied the
// metadata log up to its registration, i.e. everything committed before
// it came up. Once true it stays true.
func (n *Node) CaughtUp() bool {
	if n.caughtUp.Load() {
		return true
	}
	at := n.registeredAt.Load()
	if at == 0 || n.raft.AppliedIndex() < at {
		return false
	}
	n.caughtUp.Store(true)
	return true
}

// MetadataCurrent returns nil once this broker's image can be trusted:
// it has registered and caught up (CaughtUp), and it was not removed from
// the cluster while running. Before that the image may lack brokers and
// topics that exist, and may name leaders that have moved. Otherwise it
// returns an error wrapping ErrNotReady with the reason. Unlike Ready it
// does not need a controller right now: an image, once caught up, follows
// the quorum whenever it has one.
func (n *Node) MetadataCurrent() error {
	switch {
	case n.removed.Load():
		return fmt.Errorf("%w: broker %d was removed from the cluster while running; restart it to join again as a new broker",
			ErrNotReady, n.cfg.BrokerID)
	case n.CaughtUp():
		return nil
	case n.epoch.Load() == 0:
		return fmt.Errorf("%w: broker %d has not registered with the controller", ErrNotReady, n.cfg.BrokerID)
	}
	return fmt.Errorf("%w: broker %d is replaying the metadata log", ErrNotReady, n.cfg.BrokerID)
}

// Ready returns nil when the broker can serve: the quorum has a leader and
// this broker has registered and caught up. Otherwise it returns an error
// wrapping ErrNotReady with the reason.
func (n *Node) Ready() error {
	switch {
	case n.removed.Load():
		return fmt.Errorf("%w: broker %d was removed from the cluster while running; restart it to join again as a new broker",
			ErrNotReady, n.cfg.BrokerID)
	case n.ControllerID() < 0:
		return fmt.Errorf("%w: the metadata quorum has no controller", ErrNotReady)
	case n.epoch.Load() == 0:
		return fmt.Errorf("%w: broker %d has not registered with the controller", ErrNotReady, n.cfg.BrokerID)
	case !n.CaughtUp():
		return fmt.Errorf("%w: broker %d is replaying the metadata log", ErrNotReady, n.cfg.BrokerID)
	}
	return nil
}

// WaitReady blocks until Ready returns nil or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		err := n.Ready()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-t.C:
		}
	}
}

// watchLeadership runs the controller while this node is the raft leader.
// Raft reports every change of its state to the observer after making
// it, and each report makes this loop look at the current state. A report
// is dropped only while the channel is full, that is while reports made
// before it wait to be handled; handling the last of those looks at the
// state after the dropped change. So no change goes unseen, and no timer
// needs to wake this loop while the leadership stays where it is.
func (n *Node) watchLeadership() {
	defer n.wg.Done()
	ch := make(chan raft.Observation, 8)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	n.raft.RegisterObserver(obs)
	defer n.raft.DeregisterObserver(obs)
	for {
		// The first pass covers a change made before the observer was
		// registered (a sole voter elects itself at start).
		if n.IsController() {
			n.startController()
		} else {
			n.stopController()
		}
		select {
		case <-n.ctx.Done():
			n.stopController()
			return
		case <-ch:
		}
	}
}

func (n *Node) startController() {
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if n.ctl != nil {
		return
	}
	n.ctl = newController(n)
	n.log.Info("Became controller", "term", n.raft.CurrentTerm())
}

func (n *Node) stopController() {
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if n.ctl == nil {
		return
	}
	n.ctl.stop()
	n.ctl = nil
	n.log.Info("No longer controller")
}

// controller returns the running controller, or ErrNotController.
func (n *Node) controller() (*controller, error) {
	n.ctlMu.Lock()
	defer n.ctlMu.Unlock()
	if n.ctl == nil || !n.IsController() {
		return nil, fmt.Errorf("%w: broker %d", ErrNotController, n.cfg.BrokerID)
	}
	return n.ctl, nil
}
