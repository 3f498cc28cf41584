// Package core is the KairoLog broker's core: the broker as a library,
// speaking no wire format. Its methods take and return broker/api's
// requests and results and are what every front door (broker/httpapi, the
// Kafka listener) translates to; it imports none of them, nor the HTTP
// client.
//
// It wires the metadata quorum and controller (broker/cluster), the
// partition replicas (broker/replica, over broker/storage) and the
// consumer-group coordinators (broker/coordinators, over broker/group)
// into one Broker, and decides where each request runs (route.go): produce
// and fetch on the partition leader, group requests on the group's
// coordinator, passed on once over the peer transport (broker/peer) when
// that is another broker. PeerHandler serves the peer listener: the
// controller's and the replicas' operations, the partition views
// (groupview.go, partitionsview.go) and the requests other brokers pass
// on. errors.go gives every error of the layers below its api code.
//
// Lifecycle: New starts everything (raft, replicas, coordinators); Run runs
// the background loops until its context ends; ControlledShutdown moves this
// broker's leaderships away; Close stops the rest and closes the logs with
// their clean-shutdown markers.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/cluster/metadata"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/coordinators"
	"github.com/kairolog/kairolog/broker/memory"
	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
)

// Broker is one running broker.
type Broker struct {
	cfg      config.Config
	settings config.Settings
	id       int32
	log      *slog.Logger
	now      func() time.Time

	node     *cluster.Node
	replicas *replica.Manager
	coords   *coordinators.Coordinators
	// peerClient calls other brokers' peer listeners.
	peerClient *peer.Client
	// forwards passes produces on to their leaders, coalesced per leader.
	forwards *produceForwarder
	rr       sync.Map // topic → *roundRobin
	// producerIDs hands out idempotent producers' ids.
	producerIDs producerIDs
	// memory bounds what requests hold at once (broker/memory).
	memory memory.Budget
	// peerMux is the peer listener's handler, once PeerHandler made it;
	// the metrics read its request counts.
	peerMux atomic.Pointer[peer.Mux]
	// peerStreams serves the peer streams in front of peerMux.
	peerStreams atomic.Pointer[peer.StreamServer]

	ctx    context.Context
	cancel context.CancelFunc

	closeOnce    sync.Once
	shutdownOnce sync.Once
	shutdownErr  error
}

// New starts a broker: it joins (or bootstraps) the metadata quorum, opens
// the partition logs found in the data directory and follows the metadata.
// It serves requests as soon as Ready returns nil.
func New(cfg config.Config) (*Broker, error) {
	if err := cfg.SetDefaults(); err != nil {
		closeListener(cfg.RaftListener)
		return nil, err
	}
	s := cfg.Settings
	pc := peer.NewClient(cfg.PeerSecret, peer.WithTLS(cfg.PeerTLS))
	b := &Broker{cfg: cfg, settings: s, id: cfg.ID, log: cfg.Logger.With("broker", cfg.ID), now: cfg.Now,
		peerClient: pc, memory: memory.NewBudget(s.QueuedMaxRequestBytes, s.QueuedMaxResponseBytes)}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.forwards = newProduceForwarder(b.ctx, pc)
	b.coords = coordinators.New(coordinators.Config{BrokerID: cfg.ID, Image: b.image, Partitions: b.groupView(),
		SessionTimeout: s.GroupStaleTimeout, CleanupInterval: s.GroupCleanupInterval, CompactBytes: s.OffsetsCompactBytes,
		InitialRebalanceDelay: s.GroupInitialRebalanceDelay, Now: cfg.Now, Logger: b.log})

	raftAdvertise := cfg.RaftAdvertise
	if raftAdvertise == "" {
		var err error
		if raftAdvertise, err = deriveRaftAdvertise(cfg.RaftListen, cfg.HTTPAdvertise); err != nil {
			b.cancel()
			closeListener(cfg.RaftListener)
			return nil, err
		}
	}
	node, err := cluster.Start(cluster.Config{
		BrokerID: int(cfg.ID), DataDir: cfg.DataDir, RaftListen: cfg.RaftListen, RaftListener: cfg.RaftListener, RaftAdvertise: raftAdvertise,
		RaftTLS:       cfg.PeerTLS,
		HTTPAdvertise: cfg.HTTPAdvertise, PeerAdvertise: cfg.PeerAdvertise, KafkaAdvertise: cfg.KafkaAdvertise, Peer: pc,
		Rack: cfg.Rack, InitialVoters: cfg.InitialVoters,
		JoinAddresses:     cfg.BootstrapServers,
		HeartbeatInterval: s.BrokerHeartbeatInterval, SessionTimeout: s.BrokerSessionTimeout,
		LeaderRebalanceInterval:  leaderRebalanceInterval(s),
		DefaultMinInsyncReplicas: s.MinInsyncReplicas,
		OffsetsTopicPartitions:   int(s.OffsetsTopicNumPartitions), OffsetsTopicReplicas: int(s.OffsetsTopicReplicationFactor),
		// Retention must never delete group state: coordinators trim their
		// partitions themselves once a snapshot covers the records
		// (broker/coordinators).
		OffsetsTopicConfig: map[string]string{"segment.bytes": strconv.FormatInt(s.OffsetsTopicSegmentBytes, 10),
			"retention.ms": "-1", "retention.bytes": "-1"},
		Logger: cfg.Logger, RaftLogOutput: cfg.RaftLogOutput, RaftLogLevel: cfg.RaftLogLevel,
	})
	if err != nil {
		b.cancel()
		return nil, fmt.Errorf("start metadata quorum: %w", err)
	}
	b.node = node
	b.replicas, err = replica.NewManager(replica.Config{
		BrokerID: cfg.ID, DataDir: cfg.DataDir,
		Metadata: replica.ClusterMetadata{Source: node}, ISR: replica.ClusterISR{Node: node}, Peer: pc,
		LogConfig:         func(overrides map[string]string) storage.Config { return logConfig(s, overrides) },
		ReplicaLagTimeMax: s.ReplicaLagTimeMax, FetchWait: s.ReplicaFetchWaitMax, FetchMaxBytes: s.ReplicaFetchMaxBytes,
		FetchResponseMaxBytes:  s.ReplicaFetchRespMaxBytes,
		RetentionCheckInterval: s.LogRetentionCheckMs,
		OnLeadershipChange:     b.coords.OnLeadershipChange,
		Logger:                 cfg.Logger,
	})
	if err != nil {
		b.cancel()
		node.Close()
		return nil, fmt.Errorf("open partition replicas: %w", err)
	}
	b.coords.Start(b.replicas)
	return b, nil
}

// closeListener closes a raft listener handed over to a broker that failed
// to start.
func closeListener(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}

// deriveRaftAdvertise is the raft listen address when it names a host, and
// otherwise the advertised HTTP host with the raft port.
func deriveRaftAdvertise(raftListen, httpAdvertise string) (string, error) {
	host, port, err := net.SplitHostPort(raftListen)
	if err != nil {
		return "", fmt.Errorf("raft listen address %q: %w", raftListen, err)
	}
	if host != "" && !net.ParseIP(host).IsUnspecified() {
		return raftListen, nil
	}
	ahost, _, err := net.SplitHostPort(httpAdvertise)
	if err != nil {
		return "", fmt.Errorf("advertised address %q: %w", httpAdvertise, err)
	}
	return net.JoinHostPort(ahost, port), nil
}

// Run runs the background work until ctx ends: creating __consumer_offsets
// once the cluster is up, the stale-member cleanup loop, and taking the
// produces waiting to be passed on to a leader that lost its leadership
// back out of its queue.
func (b *Broker) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); b.ensureOffsetsTopic(ctx) }()
	go func() { defer wg.Done(); b.coords.RunCleanup(ctx, b.settings.GroupCleanupInterval) }()
	go func() { defer wg.Done(); b.rerouteMovedForwards(ctx) }()
	wg.Wait()
	return nil
}

// ensureOffsetsTopic creates __consumer_offsets as soon as the cluster can,
// so the first group request does not wait for it.
func (b *Broker) ensureOffsetsTopic(ctx context.Context) {
	for ctx.Err() == nil {
		if err := b.node.WaitReady(ctx); err != nil {
			return
		}
		if b.image().Topic(coordinators.Topic) != nil {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := b.node.EnsureOffsetsTopic(cctx)
		cancel()
		if err == nil {
			return
		}
		b.log.Warn("Creating the offsets topic failed; retrying", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// CleanupStaleMembers runs one pass of the background stale-member cleanup
// now (tests use it instead of waiting for the interval).
func (b *Broker) CleanupStaleMembers(ctx context.Context) { b.coords.CleanupOnce(ctx) }

// noControllerWait is how long a controlled shutdown waits for the cluster
// to have a controller at all: raft elects one within about two election
// timeouts (1 s each), so a longer gap means the quorum is lost (the other
// voters are stopping too) and nothing can move anyway.
const noControllerWait = 2 * time.Second

// ControlledShutdown moves this broker's leaderships to other in-sync
// replicas before it stops, so producers and consumers fail over at once.
// It is bounded by controlled.shutdown.timeout.ms, and gives up early when
// the cluster has had no controller for noControllerWait (the last voters
// of a cluster that is being stopped as a whole).
func (b *Broker) ControlledShutdown(ctx context.Context) error {
	b.shutdownOnce.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, b.settings.ControlledShutdownMax)
		defer cancel()
		if err := b.node.Ready(); err != nil {
			return
		}
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			var since time.Time
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-t.C:
					switch {
					case b.node.ControllerID() >= 0:
						since = time.Time{}
					case since.IsZero():
						since = now
					case now.Sub(since) >= noControllerWait:
						b.log.Warn("No controller to move leaderships to; stopping without a controlled shutdown")
						cancel()
						return
					}
				}
			}
		}()
		b.shutdownErr = b.node.ControlledShutdown(ctx)
	})
	return b.shutdownErr
}

// Close stops the broker: coordinators, replicas (closing every log with a
// clean-shutdown marker) and the metadata quorum. Call ControlledShutdown
// first for a graceful stop.
func (b *Broker) Close() error {
	var err error
	b.closeOnce.Do(func() {
		b.cancel()
		b.coords.Close()
		if e := b.replicas.Close(); e != nil {
			err = e
		}
		if e := b.node.Close(); e != nil && err == nil {
			err = e
		}
		b.peerClient.Close()
		b.ClosePeerStreams()
	})
	return err
}

// Memory is the broker's request and reply memory budget: front doors
// charge request bodies to it, Fetch its replies.
func (b *Broker) Memory() memory.Budget { return b.memory }

// ID is the broker id.
func (b *Broker) ID() int32 { return b.id }

// Settings are the broker-wide settings this broker runs with, sorted by
// name: those its properties set, and the defaults. It never fails; the
// error is for a front door's authorization in front of it.
func (b *Broker) Settings(context.Context) ([]api.BrokerSetting, error) {
	values := b.settings.Values(b.cfg.GivenSettings)
	out := make([]api.BrokerSetting, len(values))
	for i, v := range values {
		out[i] = api.BrokerSetting{Name: v.Name, Given: v.Given, Doc: v.Doc}
		if v.Value != "" {
			out[i].Value = &v.Value
		}
	}
	return out, nil
}

// ClusterID is the cluster's id, once the metadata quorum has named it
// ("" before).
func (b *Broker) ClusterID() string { return b.image().ClusterID }

func (b *Broker) image() *metadata.Image { return b.node.Image() }

// Ready is nil once the broker serves: it has joined and caught up with the
// metadata quorum, __consumer_offsets exists, and the group coordinators it
// runs have replayed their partitions.
func (b *Broker) Ready() error {
	if err := b.node.Ready(); err != nil {
		return errNotReady("%v", err)
	}
	if b.image().Topic(coordinators.Topic) == nil {
		return errNotReady("%s has not been created yet", coordinators.Topic)
	}
	if n := b.coords.Loading(); n > 0 {
		return errNotReady("%d group coordinators are loading", n)
	}
	return nil
}

// leaderRebalanceInterval is how often the controller moves leaderships
// back to preferred replicas: never (negative) without
// auto.leader.rebalance.enable.
func leaderRebalanceInterval(s config.Settings) time.Duration {
	if !s.AutoLeaderRebalance {
		return -1
	}
	return s.LeaderImbalanceCheck
}
