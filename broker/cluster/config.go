package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/peer"
	"github.com/kairolog/kairolog/broker/tlsconf"
)

// Default timeouts. Together they bound failover (the time from a broker
// stopping to its partitions having new leaders):
//
//   - a broker that is not the controller: at most SessionTimeout plus one
//     controller tick (HeartbeatInterval/2) after its last heartbeat;
//   - the controller itself: raft notices the missing leader within
//     RaftHeartbeatTimeout..2×RaftHeartbeatTimeout, elects a new one in a
//     few milliseconds on a LAN, and the new controller, whose clock for
//     every broker starts when it takes over, fences after SessionTimeout.
//
// With these values that is ≈2.5–2.75 s and ≈3–3.75 s (plus the time to
// commit the fence), under the 5 s target. Five missed heartbeats fence a
// broker, so a brief stall does not.
// A controlled shutdown moves leadership at once and does not wait for
// any of these.
const (
	DefaultHeartbeatInterval       = 500 * time.Millisecond
	DefaultSessionTimeout          = 2500 * time.Millisecond
	DefaultRaftHeartbeatTimeout    = 500 * time.Millisecond
	DefaultRaftElectionTimeout     = 1000 * time.Millisecond
	DefaultLeaderRebalanceInterval = 5 * time.Second
	DefaultOffsetsTopicPartitions  = 10
	DefaultOffsetsTopicReplicas    = 3
)

// OffsetsTopic is the internal topic consumer groups commit offsets to.
const OffsetsTopic = "__consumer_offsets"

// Voter is one entry of --initial-voters.
type Voter struct {
	ID      int
	Address string // raft address, host:port
}

// ParseVoters parses "0@host:port,1@host:port,…". An empty string is no
// voters (a single broker bootstraps alone).
func ParseVoters(s string) ([]Voter, error) {
	var out []Voter
	seen := map[int]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		idStr, addr, ok := strings.Cut(item, "@")
		id, err := strconv.Atoi(idStr)
		if !ok || err != nil || id < 0 || addr == "" {
			return nil, fmt.Errorf("initial voter %q: want id@host:port", item)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("initial voter %q: %v", item, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("initial voter %d listed twice", id)
		}
		seen[id] = true
		out = append(out, Voter{ID: id, Address: addr})
	}
	return out, nil
}

// Config configures a Node.
type Config struct {
	// BrokerID is this broker's id (--id).
	BrokerID int
	// DataDir is the broker's data directory; the metadata quorum keeps
	// its log and snapshots in DataDir/metadata.
	DataDir string
	// RaftListen is the address the raft transport listens on (":9093").
	RaftListen string
	// RaftListener, when set, is the raft transport's listener, already
	// bound (see broker.Config.RaftListener); RaftListen is then only its
	// address. Start takes it over and closes it, also when Start fails.
	RaftListener net.Listener
	// RaftAdvertise is the host:port peers dial for raft; it may be a DNS
	// name. Defaults to RaftListen when that names a host.
	RaftAdvertise string
	// RaftTLS is the mutual TLS of the raft transport; nil is plain.
	RaftTLS *tlsconf.Transport
	// HTTPAdvertise is the host:port of this broker's client (HTTP)
	// listener, as the metadata shows it to clients.
	HTTPAdvertise string
	// PeerAdvertise is the host:port of this broker's peer listener, where
	// other brokers send it controller operations, replica fetches and
	// proxied requests (broker/peer).
	PeerAdvertise string
	// KafkaAdvertise is the host:port Kafka clients reach this broker's
	// Kafka listener at, as Kafka's Metadata shows it (empty: none).
	KafkaAdvertise string
	// Rack is the broker's rack (zone), used to spread replicas.
	Rack string
	// InitialVoters are the brokers that form the quorum at bootstrap.
	// Empty means a single-voter cluster of this broker alone.
	InitialVoters []Voter
	// JoinAddresses are peer addresses a broker that is not an initial
	// voter asks to join through. Default: the initial voters' hosts with
	// this broker's peer port.
	JoinAddresses []string

	HeartbeatInterval       time.Duration // broker.heartbeat.interval.ms
	SessionTimeout          time.Duration // broker.session.timeout.ms
	RaftHeartbeatTimeout    time.Duration
	RaftElectionTimeout     time.Duration
	LeaderRebalanceInterval time.Duration // preferred-leader elections; negative disables
	// DefaultMinInsyncReplicas is the broker-wide min.insync.replicas used by
	// SafeToRestart for topics without an override (default 1).
	DefaultMinInsyncReplicas int
	// OffsetsTopicPartitions and OffsetsTopicReplicas shape
	// __consumer_offsets; the replica count is capped by the live brokers
	// and raised as brokers join. OffsetsTopicConfig are its overrides.
	OffsetsTopicPartitions int
	OffsetsTopicReplicas   int
	OffsetsTopicConfig     map[string]string

	// Peer carries calls to other brokers (it holds the cluster secret).
	Peer *peer.Client
	// Logger receives the node's own logs; RaftLogOutput and RaftLogLevel
	// ("error", "warn", "info", "debug", "off") the raft library's.
	Logger        *slog.Logger
	RaftLogOutput io.Writer
	RaftLogLevel  string

	// raftCommitTimeout is raft's CommitTimeout (default
	// raftCommitTimeout; tests set it).
	raftCommitTimeout time.Duration
}

func (c *Config) setDefaults() error {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&c.SessionTimeout, DefaultSessionTimeout)
	def(&c.RaftHeartbeatTimeout, DefaultRaftHeartbeatTimeout)
	def(&c.RaftElectionTimeout, DefaultRaftElectionTimeout)
	def(&c.LeaderRebalanceInterval, DefaultLeaderRebalanceInterval)
	def(&c.raftCommitTimeout, raftCommitTimeout)
	if c.DefaultMinInsyncReplicas == 0 {
		c.DefaultMinInsyncReplicas = 1
	}
	if c.OffsetsTopicPartitions == 0 {
		c.OffsetsTopicPartitions = DefaultOffsetsTopicPartitions
	}
	if c.OffsetsTopicReplicas == 0 {
		c.OffsetsTopicReplicas = DefaultOffsetsTopicReplicas
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.RaftLogOutput == nil {
		c.RaftLogOutput = os.Stderr
	}
	if c.RaftLogLevel == "" {
		c.RaftLogLevel = "warn"
	}
	if c.HeartbeatInterval >= c.SessionTimeout {
		return fmt.Errorf("heartbeat interval %v must be below the session timeout %v", c.HeartbeatInterval, c.SessionTimeout)
	}
	if c.RaftListen == "" && c.RaftListener != nil {
		c.RaftListen = c.RaftListener.Addr().String()
	}
	if c.RaftAdvertise == "" {
		host, _, err := net.SplitHostPort(c.RaftListen)
		if err != nil || host == "" || net.ParseIP(host).IsUnspecified() {
			return fmt.Errorf("raft listen address %q names no host: set the raft advertise address", c.RaftListen)
		}
		c.RaftAdvertise = c.RaftListen
	}
	if c.HTTPAdvertise == "" {
		return fmt.Errorf("the HTTP advertise address is required")
	}
	if c.PeerAdvertise == "" {
		return fmt.Errorf("the peer advertise address is required")
	}
	if c.Peer == nil {
		return fmt.Errorf("a peer client is required")
	}
	if len(c.JoinAddresses) == 0 {
		_, port, err := net.SplitHostPort(c.PeerAdvertise)
		if err != nil {
			return fmt.Errorf("peer advertise address %q: %v", c.PeerAdvertise, err)
		}
		for _, v := range c.InitialVoters {
			host, _, _ := net.SplitHostPort(v.Address)
			c.JoinAddresses = append(c.JoinAddresses, net.JoinHostPort(host, port))
		}
	}
	return nil
}

// initialVoter reports whether this broker is one of the initial voters
// (always true for a single broker started without any).
func (c *Config) initialVoter() bool {
	if len(c.InitialVoters) == 0 {
		return true
	}
	for _, v := range c.InitialVoters {
		if v.ID == c.BrokerID {
			return true
		}
	}
	return false
}
