package config

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/cluster"
	"github.com/kairolog/kairolog/broker/topicconfig"
)

// Settings are the broker-wide configs of a properties file (--config-file),
// named as in Kafka's server.properties where Kafka has the same knob.
// docs/configuration.md documents every key of settingKeys.
type Settings struct {
	NumPartitions            int32
	MaxPartitions            int32
	DefaultReplicationFactor int16
	MinInsyncReplicas        int
	UncleanLeaderElection    bool
	AutoCreateTopics         bool

	LogSegmentBytes          int64
	LogSegmentMs             time.Duration
	LogRetentionMs           time.Duration
	LogRetentionBytes        int64
	LogIndexIntervalBytes    int
	LogFlushIntervalMessages int64
	LogFlushIntervalMs       time.Duration
	LogRetentionCheckMs      time.Duration
	MessageMaxBytes          int
	// ProducerIDExpiration: a partition forgets an idempotent producer
	// idle this long, and no longer deduplicates its retries.
	ProducerIDExpiration time.Duration
	// CompressionType is the codec of HTTP produces to topics without a
	// compression.type of their own.
	CompressionType string
	MaxRequestBytes int64
	// QueuedMaxRequestBytes bounds the request bodies, and what they
	// decode to, that the broker holds at once; QueuedMaxResponseBytes the
	// fetch replies (broker/memory).
	QueuedMaxRequestBytes  int64
	QueuedMaxResponseBytes int64
	// ClientIOTimeout is how long a client may take to send a request's
	// body, and to read a reply.
	ClientIOTimeout time.Duration
	// SocketRequestMaxBytes is the largest Kafka request frame; a larger
	// one closes its connection. ConnectionsMaxIdle closes a Kafka
	// connection that sends nothing for so long.
	SocketRequestMaxBytes int32
	ConnectionsMaxIdle    time.Duration

	BrokerSessionTimeout     time.Duration
	BrokerHeartbeatInterval  time.Duration
	ReplicaLagTimeMax        time.Duration
	ReplicaFetchWaitMax      time.Duration
	ReplicaFetchMaxBytes     int
	ReplicaFetchRespMaxBytes int
	ControlledShutdownMax    time.Duration
	// AutoLeaderRebalance moves leaderships back to preferred replicas
	// every LeaderImbalanceCheck; without it they move back only when an
	// administrator asks (ElectLeaders, POST /topics/{name}/elect-leaders).
	AutoLeaderRebalance  bool
	LeaderImbalanceCheck time.Duration

	GroupStaleTimeout             time.Duration
	GroupCleanupInterval          time.Duration
	GroupMinSessionTimeout        time.Duration
	GroupMaxSessionTimeout        time.Duration
	GroupInitialRebalanceDelay    time.Duration
	OffsetsTopicNumPartitions     int32
	OffsetsTopicReplicationFactor int16
	OffsetsTopicSegmentBytes      int64
	OffsetsCompactBytes           int64
}

// DefaultSettings are Kafka's defaults where Kafka has the knob, except the
// failure-detection times, which are shorter so that a pod restart on
// Kubernetes costs seconds (broker session 2.5 s, heartbeat 500 ms, replica
// lag 10 s), and the original KairoLog broker's group timeouts (5 min stale,
// 1 min cleanup). The session and heartbeat defaults are broker/cluster's,
// whose comment explains how they bound failover.
func DefaultSettings() Settings {
	return Settings{
		NumPartitions:                 1,
		MaxPartitions:                 4096,
		DefaultReplicationFactor:      1,
		MinInsyncReplicas:             1,
		LogSegmentBytes:               1 << 30,
		LogSegmentMs:                  7 * 24 * time.Hour,
		LogRetentionMs:                7 * 24 * time.Hour,
		LogRetentionBytes:             -1,
		LogIndexIntervalBytes:         4096,
		LogRetentionCheckMs:           5 * time.Minute,
		MessageMaxBytes:               1 << 20,
		ProducerIDExpiration:          24 * time.Hour, // Kafka's, storage.DefaultProducerIDExpiration
		CompressionType:               "producer",
		MaxRequestBytes:               16 << 20,
		QueuedMaxRequestBytes:         100 << 20,
		QueuedMaxResponseBytes:        100 << 20,
		ClientIOTimeout:               30 * time.Second,
		SocketRequestMaxBytes:         100 << 20,
		ConnectionsMaxIdle:            10 * time.Minute,
		BrokerSessionTimeout:          cluster.DefaultSessionTimeout,
		BrokerHeartbeatInterval:       cluster.DefaultHeartbeatInterval,
		ReplicaLagTimeMax:             10 * time.Second,
		ReplicaFetchWaitMax:           500 * time.Millisecond,
		ReplicaFetchMaxBytes:          1 << 20,
		ReplicaFetchRespMaxBytes:      10 << 20,
		ControlledShutdownMax:         30 * time.Second,
		AutoLeaderRebalance:           true,
		LeaderImbalanceCheck:          cluster.DefaultLeaderRebalanceInterval,
		GroupStaleTimeout:             5 * time.Minute,
		GroupCleanupInterval:          time.Minute,
		GroupMinSessionTimeout:        time.Second,
		GroupMaxSessionTimeout:        30 * time.Minute,
		GroupInitialRebalanceDelay:    3 * time.Second,
		OffsetsTopicNumPartitions:     10,
		OffsetsTopicReplicationFactor: 3,
		OffsetsTopicSegmentBytes:      100 << 20,
		OffsetsCompactBytes:           64 << 20,
	}
}

// enumKey takes one of the values of the topic config key named key.
func enumKey(key string, dst func(*Settings, string)) func(*Settings, string) error {
	k, _ := topicconfig.Lookup(key)
	return func(s *Settings, v string) error {
		v = strings.TrimSpace(v)
		if err := k.Check(v); err != nil {
			return err
		}
		dst(s, v)
		return nil
	}
}

// settingKey is one properties key: how to parse it, what it means, and
// its value in a Settings as the key would give it ("" for unset).
type settingKey struct {
	name string
	doc  string
	set  func(s *Settings, v string) error
	get  func(s *Settings) string
}

func num[N int | int16 | int32 | int64](n N) string { return strconv.FormatInt(int64(n), 10) }

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// unsetIfZero is "" for a setting whose zero value means unset.
func unsetIfZero(v string) string {
	if v == "0" {
		return ""
	}
	return v
}

// retentionHours is log.retention.hours of a retention time: whole hours,
// -1 for forever.
func retentionHours(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	return strconv.FormatInt(int64(d/time.Hour), 10)
}

func intKey(lo, hi int64, dst func(*Settings, int64)) func(*Settings, string) error {
	return func(s *Settings, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%d is outside [%d, %d]", n, lo, hi)
		}
		dst(s, n)
		return nil
	}
}

// topicKey is a log.* setting that gives a topic config key its default:
// it takes that key's bounds from the table of topic config keys, so a
// broker-wide default is never a value a topic could not be given.
func topicKey(topicKey string, dst func(*Settings, int64)) func(*Settings, string) error {
	k, ok := topicconfig.Lookup(topicKey)
	if !ok {
		panic("broker: no topic config key " + topicKey)
	}
	return func(s *Settings, v string) error {
		v = strings.TrimSpace(v)
		if err := k.Check(v); err != nil {
			return err
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		dst(s, n)
		return nil
	}
}

func msKey(lo int64, dst func(*Settings, time.Duration)) func(*Settings, string) error {
	return intKey(lo, math.MaxInt64/int64(time.Millisecond), func(s *Settings, n int64) {
		dst(s, time.Duration(n)*time.Millisecond)
	})
}

func boolKey(dst func(*Settings, bool)) func(*Settings, string) error {
	return func(s *Settings, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("not true or false: %q", v)
		}
		dst(s, b)
		return nil
	}
}

var settingKeys = []settingKey{
	{"num.partitions", "partitions of a topic created without \"partitions\"", intKey(1, math.MaxInt32, func(s *Settings, n int64) { s.NumPartitions = int32(n) }),
		func(s *Settings) string { return num(s.NumPartitions) }},
	{"max.partitions.per.topic", "most partitions a topic may have (create and add partitions)", intKey(1, math.MaxInt32, func(s *Settings, n int64) { s.MaxPartitions = int32(n) }),
		func(s *Settings) string { return num(s.MaxPartitions) }},
	{"default.replication.factor", "replicas of a topic created without \"replication_factor\"", intKey(1, math.MaxInt16, func(s *Settings, n int64) { s.DefaultReplicationFactor = int16(n) }),
		func(s *Settings) string { return num(s.DefaultReplicationFactor) }},
	{"min.insync.replicas", "ISR size an acks=all produce needs, unless the topic overrides it", topicKey(topicconfig.MinInsyncReplicas, func(s *Settings, n int64) { s.MinInsyncReplicas = int(n) }),
		func(s *Settings) string { return num(s.MinInsyncReplicas) }},
	{"unclean.leader.election.enable", "let an out-of-sync replica lead when no ISR member is alive (topic override wins)", boolKey(func(s *Settings, b bool) { s.UncleanLeaderElection = b }),
		func(s *Settings) string { return strconv.FormatBool(s.UncleanLeaderElection) }},
	{"auto.create.topics.enable", "create an unknown topic on its first produce, with the defaults above", boolKey(func(s *Settings, b bool) { s.AutoCreateTopics = b }),
		func(s *Settings) string { return strconv.FormatBool(s.AutoCreateTopics) }},
	{"log.segment.bytes", "segment size before a new segment is rolled", topicKey(topicconfig.SegmentBytes, func(s *Settings, n int64) { s.LogSegmentBytes = n }),
		func(s *Settings) string { return num(s.LogSegmentBytes) }},
	{"log.roll.ms", "age of a segment before a new one is rolled", topicKey(topicconfig.SegmentMs, func(s *Settings, n int64) { s.LogSegmentMs = time.Duration(n) * time.Millisecond }),
		func(s *Settings) string { return ms(s.LogSegmentMs) }},
	{"log.retention.ms", "age past which whole old segments are deleted; -1 keeps them forever", topicKey(topicconfig.RetentionMs, func(s *Settings, n int64) { s.LogRetentionMs = time.Duration(n) * time.Millisecond }),
		func(s *Settings) string { return ms(s.LogRetentionMs) }},
	{"log.retention.hours", "log.retention.ms in hours (log.retention.ms wins when both are set)", intKey(-1, math.MaxInt32, func(s *Settings, n int64) { s.LogRetentionMs = time.Duration(n) * time.Hour }),
		func(s *Settings) string { return retentionHours(s.LogRetentionMs) }},
	{"log.retention.bytes", "partition size past which whole old segments are deleted; -1 = no limit", topicKey(topicconfig.RetentionBytes, func(s *Settings, n int64) { s.LogRetentionBytes = n }),
		func(s *Settings) string { return num(s.LogRetentionBytes) }},
	{"log.retention.check.interval.ms", "how often retention runs", msKey(1, func(s *Settings, d time.Duration) { s.LogRetentionCheckMs = d }),
		func(s *Settings) string { return ms(s.LogRetentionCheckMs) }},
	{"log.index.interval.bytes", "bytes between two sparse index entries", topicKey(topicconfig.IndexIntervalBytes, func(s *Settings, n int64) { s.LogIndexIntervalBytes = int(n) }),
		func(s *Settings) string { return num(s.LogIndexIntervalBytes) }},
	{"log.flush.interval.messages", "fsync after this many messages; unset = leave it to the OS", topicKey(topicconfig.FlushMessages, func(s *Settings, n int64) { s.LogFlushIntervalMessages = n }),
		func(s *Settings) string { return unsetIfZero(num(s.LogFlushIntervalMessages)) }},
	{"log.flush.interval.ms", "fsync at most this long after a write; unset = leave it to the OS", topicKey(topicconfig.FlushMs, func(s *Settings, n int64) { s.LogFlushIntervalMs = time.Duration(n) * time.Millisecond }),
		func(s *Settings) string { return unsetIfZero(ms(s.LogFlushIntervalMs)) }},
	{"message.max.bytes", "largest batch a produce may write to one partition", intKey(1, math.MaxInt32, func(s *Settings, n int64) { s.MessageMaxBytes = int(n) }),
		func(s *Settings) string { return num(s.MessageMaxBytes) }},
	{"producer.id.expiration.ms", "a partition forgets an idempotent producer that has not written to it for this long, and stores its retries again", msKey(1, func(s *Settings, d time.Duration) { s.ProducerIDExpiration = d }),
		func(s *Settings) string { return ms(s.ProducerIDExpiration) }},
	{"compression.type", "codec of the batches an HTTP produce writes, unless the topic overrides it: producer (as sent: none over HTTP), uncompressed, gzip, snappy, lz4 or zstd", enumKey(topicconfig.CompressionType, func(s *Settings, v string) { s.CompressionType = v }),
		func(s *Settings) string { return s.CompressionType }},
	{"max.request.bytes", "largest HTTP request body (413 BODY_TOO_LARGE above it)", intKey(1024, math.MaxInt32, func(s *Settings, n int64) { s.MaxRequestBytes = n }),
		func(s *Settings) string { return num(s.MaxRequestBytes) }},
	{"queued.max.request.bytes", "request bodies, and what they decode to, the broker holds at once across all requests (503 BROKER_BUSY beyond it); at least 4 × max.request.bytes", intKey(4096, math.MaxInt64, func(s *Settings, n int64) { s.QueuedMaxRequestBytes = n }),
		func(s *Settings) string { return num(s.QueuedMaxRequestBytes) }},
	{"queued.max.response.bytes", "fetch replies the broker builds at once across all requests (503 BROKER_BUSY beyond it)", intKey(1<<20, math.MaxInt64, func(s *Settings, n int64) { s.QueuedMaxResponseBytes = n }),
		func(s *Settings) string { return num(s.QueuedMaxResponseBytes) }},
	{"client.io.timeout.ms", "how long a client may take to send a request body, and to read a reply, before its connection is closed", msKey(1, func(s *Settings, d time.Duration) { s.ClientIOTimeout = d }),
		func(s *Settings) string { return ms(s.ClientIOTimeout) }},
	{"socket.request.max.bytes", "largest Kafka request frame; a larger one closes its connection, as in Kafka", intKey(1024, math.MaxInt32, func(s *Settings, n int64) { s.SocketRequestMaxBytes = int32(n) }),
		func(s *Settings) string { return num(s.SocketRequestMaxBytes) }},
	{"connections.max.idle.ms", "a Kafka connection that sends nothing for this long is closed", msKey(1, func(s *Settings, d time.Duration) { s.ConnectionsMaxIdle = d }),
		func(s *Settings) string { return ms(s.ConnectionsMaxIdle) }},
	{"broker.session.timeout.ms", "a broker silent this long is fenced and loses its leaderships", msKey(1, func(s *Settings, d time.Duration) { s.BrokerSessionTimeout = d }),
		func(s *Settings) string { return ms(s.BrokerSessionTimeout) }},
	{"broker.heartbeat.interval.ms", "how often a broker heartbeats the controller", msKey(1, func(s *Settings, d time.Duration) { s.BrokerHeartbeatInterval = d }),
		func(s *Settings) string { return ms(s.BrokerHeartbeatInterval) }},
	{"replica.lag.time.max.ms", "a follower not caught up for this long leaves the ISR", msKey(1, func(s *Settings, d time.Duration) { s.ReplicaLagTimeMax = d }),
		func(s *Settings) string { return ms(s.ReplicaLagTimeMax) }},
	{"replica.fetch.wait.max.ms", "how long a follower's fetch waits at the leader for new data", msKey(0, func(s *Settings, d time.Duration) { s.ReplicaFetchWaitMax = d }),
		func(s *Settings) string { return ms(s.ReplicaFetchWaitMax) }},
	{"replica.fetch.max.bytes", "bytes a follower fetches per partition per request", intKey(1024, math.MaxInt32, func(s *Settings, n int64) { s.ReplicaFetchMaxBytes = int(n) }),
		func(s *Settings) string { return num(s.ReplicaFetchMaxBytes) }},
	{"replica.fetch.response.max.bytes", "bytes a follower fetches per request over all the partitions it follows on one leader", intKey(1024, 128<<20, func(s *Settings, n int64) { s.ReplicaFetchRespMaxBytes = int(n) }),
		func(s *Settings) string { return num(s.ReplicaFetchRespMaxBytes) }},
	{"controlled.shutdown.timeout.ms", "how long a stopping broker waits for its leaderships to move", msKey(0, func(s *Settings, d time.Duration) { s.ControlledShutdownMax = d }),
		func(s *Settings) string { return ms(s.ControlledShutdownMax) }},
	{"auto.leader.rebalance.enable", "move leaderships back to preferred replicas on their own (off: only when asked)", boolKey(func(s *Settings, b bool) { s.AutoLeaderRebalance = b }),
		func(s *Settings) string { return strconv.FormatBool(s.AutoLeaderRebalance) }},
	{"leader.imbalance.check.interval.seconds", "how often the controller moves leaderships back to preferred replicas", intKey(1, math.MaxInt32, func(s *Settings, n int64) { s.LeaderImbalanceCheck = time.Duration(n) * time.Second }),
		func(s *Settings) string { return num(int64(s.LeaderImbalanceCheck / time.Second)) }},
	{"group.stale.timeout.ms", "a group member not seen this long is removed by the cleanup loop (unless its group sets session_timeout_ms)", msKey(1, func(s *Settings, d time.Duration) { s.GroupStaleTimeout = d }),
		func(s *Settings) string { return ms(s.GroupStaleTimeout) }},
	{"group.cleanup.interval.ms", "how often the stale-member cleanup loop runs", msKey(1, func(s *Settings, d time.Duration) { s.GroupCleanupInterval = d }),
		func(s *Settings) string { return ms(s.GroupCleanupInterval) }},
	{"group.min.session.timeout.ms", "smallest session_timeout_ms a joining member may ask for", msKey(1, func(s *Settings, d time.Duration) { s.GroupMinSessionTimeout = d }),
		func(s *Settings) string { return ms(s.GroupMinSessionTimeout) }},
	{"group.max.session.timeout.ms", "largest session_timeout_ms a joining member may ask for", msKey(1, func(s *Settings, d time.Duration) { s.GroupMaxSessionTimeout = d }),
		func(s *Settings) string { return ms(s.GroupMaxSessionTimeout) }},
	{"group.initial.rebalance.delay.ms", "how long the first generation of a group that Kafka consumers (members that assign) join from empty waits for more members, extended while they keep coming, up to the rebalance timeout; 0 = none", msKey(0, func(s *Settings, d time.Duration) { s.GroupInitialRebalanceDelay = d }),
		func(s *Settings) string { return ms(s.GroupInitialRebalanceDelay) }},
	{"offsets.topic.num.partitions", "partitions of __consumer_offsets (fixed once the topic exists)", intKey(1, 1000, func(s *Settings, n int64) { s.OffsetsTopicNumPartitions = int32(n) }),
		func(s *Settings) string { return num(s.OffsetsTopicNumPartitions) }},
	{"offsets.topic.replication.factor", "replicas of __consumer_offsets, capped at the brokers alive when it is created", intKey(1, math.MaxInt16, func(s *Settings, n int64) { s.OffsetsTopicReplicationFactor = int16(n) }),
		func(s *Settings) string { return num(s.OffsetsTopicReplicationFactor) }},
	{"offsets.topic.segment.bytes", "segment size of __consumer_offsets", topicKey(topicconfig.SegmentBytes, func(s *Settings, n int64) { s.OffsetsTopicSegmentBytes = n }),
		func(s *Settings) string { return num(s.OffsetsTopicSegmentBytes) }},
	{"offsets.compact.bytes", "a coordinator snapshots its groups and moves its partition's log start once this many journal bytes follow the last snapshot (and outweigh it)", intKey(1024, math.MaxInt64, func(s *Settings, n int64) { s.OffsetsCompactBytes = n }),
		func(s *Settings) string { return num(s.OffsetsCompactBytes) }},
}

// SettingValue is one setting as a broker runs with it.
type SettingValue struct {
	Name, Doc string
	// Value is as the key would give it; "" for a setting left unset.
	Value string
	// Given says the properties set it; otherwise it is the default.
	Given bool
}

// Values lists every setting of s, sorted by name; given names the keys
// the properties set.
func (s *Settings) Values(given []string) []SettingValue {
	out := make([]SettingValue, 0, len(settingKeys))
	for _, k := range settingKeys {
		out = append(out, SettingValue{Name: k.name, Doc: k.doc, Value: k.get(s), Given: slices.Contains(given, k.name)})
	}
	slices.SortFunc(out, func(a, b SettingValue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// SettingKeys lists every key Apply understands, sorted.
func SettingKeys() []string {
	out := make([]string, 0, len(settingKeys))
	for _, k := range settingKeys {
		out = append(out, k.name)
	}
	sort.Strings(out)
	return out
}

// Apply sets the known keys of props. It returns the keys it does not know
// (the broker logs them, as Kafka does, rather than refusing to start) and
// fails on a known key with a bad value.
func (s *Settings) Apply(props map[string]string) (unknown []string, err error) {
	byName := make(map[string]settingKey, len(settingKeys))
	for _, k := range settingKeys {
		byName[k.name] = k
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	// Apply hour-based retention before the ms key so the ms key wins.
	sort.Slice(names, func(i, j int) bool {
		if names[i] == "log.retention.hours" || names[j] == "log.retention.hours" {
			return names[i] == "log.retention.hours"
		}
		return names[i] < names[j]
	})
	for _, name := range names {
		k, ok := byName[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		if err := k.set(s, props[name]); err != nil {
			return unknown, fmt.Errorf("config %s: %w", name, err)
		}
	}
	return unknown, s.validate()
}

func (s *Settings) validate() error {
	if s.BrokerHeartbeatInterval >= s.BrokerSessionTimeout {
		return fmt.Errorf("broker.heartbeat.interval.ms (%v) must be below broker.session.timeout.ms (%v)",
			s.BrokerHeartbeatInterval, s.BrokerSessionTimeout)
	}
	if s.QueuedMaxRequestBytes < 4*s.MaxRequestBytes {
		// A body of max.request.bytes grows its buffer by doubling (the old
		// and the new buffer are held during the copy), and decoding it is
		// charged too: it must fit the part of the pool large bodies share.
		return fmt.Errorf("queued.max.request.bytes (%d) must be at least 4 × max.request.bytes (%d)",
			s.QueuedMaxRequestBytes, s.MaxRequestBytes)
	}
	if s.QueuedMaxResponseBytes < 16*int64(s.MessageMaxBytes) {
		// A fetch returns at least one record, of up to message.max.bytes,
		// and may take half of the reply budget (Broker.chargeFetch).
		return fmt.Errorf("queued.max.response.bytes (%d) must be at least 16 × message.max.bytes (%d)",
			s.QueuedMaxResponseBytes, s.MessageMaxBytes)
	}
	if s.ClientIOTimeout <= 0 {
		return fmt.Errorf("client.io.timeout.ms must be positive")
	}
	if s.GroupMinSessionTimeout > s.GroupMaxSessionTimeout {
		return fmt.Errorf("group.min.session.timeout.ms is above group.max.session.timeout.ms")
	}
	return nil
}
