package replica

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/storage"
)

// Defaults of Config.
const (
	// DefaultReplicaLagTimeMax is replica.lag.time.max.ms. Kafka's is 30 s
	// (raised from 10 s by KIP-537 to stop ISR flapping on slow clouds
	// with ZooKeeper). KairoLog keeps 10 s: its followers long-poll every
	// FetchWait (500 ms), so a live follower proves itself twenty times
	// within the limit, and the lag time is how long acks=all producers
	// stall when a broker dies without being fenced — on Kubernetes a pod
	// being rescheduled should cost seconds, not half a minute.
	DefaultReplicaLagTimeMax = 10 * time.Second
	// DefaultFetchWait is how long a follower's fetch waits on the leader
	// for new data (Kafka's replica.fetch.wait.max.ms).
	DefaultFetchWait = 500 * time.Millisecond
	// DefaultFetchMaxBytes bounds the batches of one partition in a
	// follower's fetch (replica.fetch.max.bytes).
	DefaultFetchMaxBytes = 1 << 20
	// DefaultFetchResponseMaxBytes bounds the batches of all partitions in
	// one reply of a fetch session (replica.fetch.response.max.bytes).
	DefaultFetchResponseMaxBytes = 10 << 20
	// DefaultRetentionCheckInterval is log.retention.check.interval.ms.
	DefaultRetentionCheckInterval = 5 * time.Minute
	// alterISRTimeout bounds one AlterISR round trip to the controller.
	alterISRTimeout = 10 * time.Second
)

// Config configures a Manager.
type Config struct {
	// BrokerID is this broker's id.
	BrokerID int32
	// DataDir holds one directory per hosted partition, <topic>-<partition>.
	DataDir string
	// Metadata is the cluster metadata; ISR changes AlterISR proposals.
	Metadata Metadata
	ISR      ISRChanger
	// LogConfig turns a topic's config overrides into the log's settings.
	// Nil uses LogConfigFromTopic.
	LogConfig func(overrides map[string]string) storage.Config
	// Peer calls the leaders this broker follows (broker/peer); it holds
	// the cluster secret. Required.
	Peer *peer.Client
	// Durations and sizes; zero takes the default above.
	ReplicaLagTimeMax      time.Duration
	FetchWait              time.Duration
	FetchMaxBytes          int
	FetchResponseMaxBytes  int
	RetentionCheckInterval time.Duration
	// OnLeadershipChange, if set, is called (from the manager's metadata
	// goroutine, which it must not block for long) after this broker
	// becomes leader or stops being leader of a partition; the group
	// coordinator uses it to load or drop __consumer_offsets partitions.
	OnLeadershipChange func(topic string, partition int32, leader bool, epoch int32)
	Logger             *slog.Logger
	// Now is the clock (tests); nil uses time.Now.
	Now func() time.Time
}

// Manager holds the partition replicas of one broker and moves each to the
// role the metadata gives it.
type Manager struct {
	cfg    Config
	logger *slog.Logger
	client *peerClient
	env    *partitionEnv
	// sessions are the fetch sessions of the followers fetching from this
	// broker; fetchers fetch what this broker follows, one per leader.
	sessions *sessionCache
	fetchers *fetchers

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.RWMutex
	partitions map[partitionKey]*partition
	// known is the latest metadata state of every partition, hosted or not,
	// so a request for a partition led elsewhere learns its leader.
	known map[partitionKey]PartitionState
	// configs is the overrides each hosted partition's log was given last.
	configs map[partitionKey]map[string]string
	closed  bool

	// checkpointMu serialises high watermark checkpoint writes;
	// checkpointed is what the last one wrote (nil: none yet, or it
	// failed), checkpointedChanges the value of hwChanges it started from.
	checkpointMu        sync.Mutex
	checkpointed        map[partitionKey]int64
	checkpointedChanges uint64
	// hwChanges counts the high watermark moves of hosted partitions and
	// the changes of the hosted set: while it stands still, the
	// checkpoint need not look at any partition (checkpoint.go).
	hwChanges atomic.Uint64

	// reconciledIndex is the index of the image the latest reconcile
	// acted on (lease.go).
	reconciledIndex atomic.Uint64

	// caughtUp is set, for good, by the first reconcile whose image was
	// caught up with the metadata log (Metadata.Partitions); only the
	// metadata goroutine uses it.
	caughtUp bool

	// reconciled is notified after every metadata change is applied; a
	// follower's request that names a leader epoch this broker has not
	// learnt yet waits on it (awaitEpoch). reconciledMu guards it.
	reconciledMu sync.Mutex
	reconciled   broadcast

	// examinations counts the looks the fetch sessions served here took
	// at partitions (sessionserve.go), entriesBuilt the partition entries
	// this broker's fetchers built for their requests (fetchloop.go);
	// for tests.
	examinations atomic.Int64
	entriesBuilt atomic.Int64
	// hwsGathered counts the partitions checkpoints read a high
	// watermark from; for tests.
	hwsGathered atomic.Int64
}

type partitionKey struct {
	topic     string
	partition int32
}

// NewManager opens every partition directory found in cfg.DataDir and
// starts following the metadata: reopened partitions serve nothing until
// the metadata gives them a role, and partitions this broker no longer hosts
// are deleted once the metadata is caught up.
func NewManager(cfg Config) (*Manager, error) {
	if cfg.Metadata == nil || cfg.ISR == nil || cfg.Peer == nil {
		return nil, fmt.Errorf("replica: Config.Metadata, Config.ISR and Config.Peer are required")
	}
	if cfg.LogConfig == nil {
		cfg.LogConfig = LogConfigFromTopic
	}
	if cfg.ReplicaLagTimeMax <= 0 {
		cfg.ReplicaLagTimeMax = DefaultReplicaLagTimeMax
	}
	if cfg.FetchWait <= 0 {
		cfg.FetchWait = DefaultFetchWait
	}
	if cfg.FetchMaxBytes <= 0 {
		cfg.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if cfg.FetchResponseMaxBytes <= 0 {
		cfg.FetchResponseMaxBytes = DefaultFetchResponseMaxBytes
	}
	if cfg.RetentionCheckInterval <= 0 {
		cfg.RetentionCheckInterval = DefaultRetentionCheckInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	m := &Manager{
		cfg:        cfg,
		logger:     cfg.Logger.With("broker", cfg.BrokerID),
		client:     &peerClient{peer: cfg.Peer},
		partitions: map[partitionKey]*partition{},
		known:      map[partitionKey]PartitionState{},
		configs:    map[partitionKey]map[string]string{},
		sessions:   newSessionCache(),
	}
	m.fetchers = newFetchers(m)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.env = &partitionEnv{
		brokerID:    cfg.BrokerID,
		lagMax:      cfg.ReplicaLagTimeMax,
		now:         cfg.Now,
		logger:      m.logger,
		proposeISR:  m.proposeISR,
		follow:      m.fetchers.follow,
		unfollow:    m.fetchers.unfollow,
		refetch:     m.fetchers.refetch,
		wentOffline: m.partitionOffline,
		leaseHeld:   m.leaseHeld,
		hwChanges:   &m.hwChanges,
	}
	if err := m.openExisting(); err != nil {
		_ = m.closePartitions() // the open error is the one worth returning
		return nil, err
	}
	updates, unsubscribe := cfg.Metadata.Subscribe()
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		defer unsubscribe()
		m.followMetadata(updates)
	}()
	go func() {
		defer m.wg.Done()
		m.runTickers()
	}()
	return m, nil
}

// caughtUpPoll is how often the metadata goroutine looks again while the
// metadata is not caught up: catching up need not change the image (the
// last entry to replay may be one already applied), so no notification is
// certain to announce it.
const caughtUpPoll = 20 * time.Millisecond

// followMetadata applies every metadata change, one at a time, until the
// manager closes.
func (m *Manager) followMetadata(updates <-chan struct{}) {
	m.reconcile()
	poll := time.NewTicker(caughtUpPoll)
	defer poll.Stop()
	for {
		var tick <-chan time.Time
		if !m.caughtUp {
			tick = poll.C
		}
		select {
		case <-m.ctx.Done():
			return
		case <-updates:
			m.reconcile()
		case <-tick:
			m.reconcile()
		}
	}
}

// reconcile moves every hosted partition to the role the current image gives
// it, opens the partitions newly assigned here and deletes those no longer
// assigned.
//
// Until the image has caught up with the metadata log, no partition becomes
// leader. A restarted broker replays an image that may be old: on it, it
// may still lead a partition whose leadership has moved, and an acks=1
// produce it accepted there would be truncated away by the real leader's
// log. Such partitions stay without a role (requests get NotLeaderError,
// which is retriable) until the caught-up image says who leads. Following
// on an old image is harmless: a leader refuses a follower of an epoch it
// does not lead, before the follower truncates or appends anything.
//
// A hosted replica whose topic id differs from the image's belongs to a
// topic that was deleted and created again under the same name. Once the
// image has caught up it is deleted and the partition starts afresh; it is
// never reused, whether or not this broker saw the image in which the
// topic was gone (images are skipped when they come quickly, and a raft
// snapshot install jumps over them). Before that it gets no role: on an
// old image the replica may be the newer of the two.
func (m *Manager) reconcile() {
	defer func() {
		m.reconciledMu.Lock()
		m.reconciled.notify()
		m.reconciledMu.Unlock()
	}()
	states, index, caughtUp := m.cfg.Metadata.Partitions()
	defer m.reconciledIndex.Store(index)
	caughtUp = caughtUp || m.caughtUp // once caught up, a broker stays so
	m.caughtUp = caughtUp
	known := make(map[partitionKey]PartitionState, len(states))
	for _, st := range states {
		known[partitionKey{st.Topic, st.Partition}] = st
	}
	m.mu.Lock()
	m.known = known
	m.mu.Unlock()

	m.openAssigned(known, caughtUp)
	for key, st := range known {
		if !st.hosts(m.cfg.BrokerID) {
			continue
		}
		m.mu.RLock()
		p := m.partitions[key]
		overrides := m.configs[key]
		m.mu.RUnlock()
		if p != nil && !p.sameTopic(st.TopicID) {
			if !caughtUp {
				continue // another topic's replica, but which is newer is not known yet
			}
			// The topic was deleted and created again while this broker
			// was away, or the images in between were skipped: this
			// replica belongs to the deleted topic.
			m.logger.Warn("Replica belongs to a deleted topic of the same name", "topic", key.topic, "partition", key.partition,
				"stale_topic_id", p.TopicID(), "topic_id", st.TopicID)
			m.removePartitions(key)
			var err error
			if p, err = m.openPartition(key.topic, key.partition, st.TopicID, st.Config, caughtUp); err != nil {
				m.logger.Error("Cannot host partition", "topic", key.topic, "partition", key.partition, "error", err)
				continue
			}
			overrides = st.Config
		}
		if p == nil {
			continue // not opened: openAssigned said why
		}
		if p.TopicID() == "" && st.TopicID != "" {
			if err := p.adoptTopicID(st.TopicID); err != nil {
				m.logger.Error("Cannot record the topic id", "topic", key.topic, "partition", key.partition, "error", err)
				continue
			}
		}
		if !maps.Equal(overrides, st.Config) {
			p.log.SetConfig(m.cfg.LogConfig(st.Config))
			m.mu.Lock()
			m.configs[key] = st.Config
			m.mu.Unlock()
		}
		if st.Leader == m.cfg.BrokerID && !caughtUp {
			continue // see above: not on the word of an old image
		}
		wasLeader, oldEpoch := p.leadership()
		p.applyState(st)
		isLeader, epoch := p.leadership()
		if m.cfg.OnLeadershipChange != nil && (wasLeader != isLeader || isLeader && epoch != oldEpoch) {
			m.cfg.OnLeadershipChange(key.topic, key.partition, isLeader, epoch)
		}
	}
	if !caughtUp {
		return // never delete data on the word of a partial image
	}
	m.mu.RLock()
	var stray []partitionKey
	for key := range m.partitions {
		if st, ok := known[key]; !ok || !st.hosts(m.cfg.BrokerID) {
			stray = append(stray, key)
		}
	}
	m.mu.RUnlock()
	m.removePartitions(stray...)
}

// runTickers checks ISR lag every half lag time (as Kafka), applies
// retention every RetentionCheckInterval and checkpoints high watermarks.
func (m *Manager) runTickers() {
	isr := time.NewTicker(m.cfg.ReplicaLagTimeMax / 2)
	defer isr.Stop()
	retention := time.NewTicker(m.cfg.RetentionCheckInterval)
	defer retention.Stop()
	checkpoint := time.NewTicker(hwCheckpointInterval)
	defer checkpoint.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-checkpoint.C:
			m.checkpointHWs()
		case now := <-isr.C:
			m.sessions.expire(now, false)
			for _, p := range m.hosted() {
				// An idle partition learns here that a background
				// fsync of its log failed.
				_ = p.checkLog(p.log.Err())
				p.maybeShrinkISR()
			}
		case <-retention.C:
			m.ApplyRetention()
		}
	}
}

// ApplyRetention deletes the segments that every hosted partition's
// retention settings allow, never one that holds a record at or above the
// partition's high watermark (a record not every in-sync replica has yet);
// the manager runs it periodically.
func (m *Manager) ApplyRetention() {
	for _, p := range m.hosted() {
		deleted, err := p.log.ApplyRetention(m.cfg.Now(), p.HighWatermark())
		if p.checkLog(err) != nil {
			m.logger.Warn("Retention failed", "topic", p.topic, "partition", p.id, "error", err)
		}
		if deleted > 0 {
			p.notifySessions() // the log start moved
		}
	}
}

// proposeISR sends prop to the controller in the background; the partition
// applies the answer. A proposal left without an answer is sent again
// every proposalBackoff until it gets one or is superseded
// (completeProposal).
func (m *Manager) proposeISR(p *partition, prop *isrProposal) {
	m.goBackground(func() {
		for {
			ctx, cancel := context.WithTimeout(m.ctx, alterISRTimeout)
			st, err := m.cfg.ISR.AlterISR(ctx, prop.req)
			cancel()
			if !p.completeProposal(prop, st, err) {
				return
			}
			select {
			case <-m.ctx.Done():
				return
			case <-time.After(proposalBackoff):
			}
		}
	})
}

// goBackground runs f on a goroutine that Close waits for. Once Close has
// begun it runs nothing and reports false: peer requests, which outlive
// the manager, must not add work Close is no longer waiting for.
func (m *Manager) goBackground(f func()) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

func (m *Manager) hosted() []*partition {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Collect(maps.Values(m.partitions))
}

// partition returns a hosted partition, or the error a request for it
// deserves: NotLeader with the leader if the partition exists elsewhere,
// UnknownPartition otherwise.
func (m *Manager) partition(topic string, partition int32) (*partition, error) {
	key := partitionKey{topic, partition}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	if p := m.partitions[key]; p != nil {
		return p, nil
	}
	if st, ok := m.known[key]; ok {
		return nil, &NotLeaderError{Topic: topic, Partition: partition, Leader: st.Leader, Epoch: st.LeaderEpoch}
	}
	return nil, fmt.Errorf("%w: %s-%d", ErrUnknownPartition, topic, partition)
}

// Close stops fetching, waits for background work and closes every log
// cleanly. It does not delete anything.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.sessions.expire(time.Now(), true)
	m.wg.Wait()
	m.checkpointHWs()
	return m.closePartitions()
}

func (m *Manager) closePartitions() error {
	var first error
	for _, p := range m.hosted() {
		p.close()
		if err := p.log.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
