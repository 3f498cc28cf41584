package storage

import (
	"math"
	"time"
)

const (
	defaultSegmentBytes  = 1 << 30
	defaultIndexInterval = 4096
	defaultRetention     = 7 * 24 * time.Hour
	// DefaultMaxBatchBytes is Kafka's message.max.bytes: 1 MiB plus the
	// overhead of a batch header.
	DefaultMaxBatchBytes = 1<<20 + BatchHeaderSize
	// maxSegmentBytes keeps every position inside a segment in a uint32
	// index entry with room for one more batch.
	maxSegmentBytes = math.MaxInt32
)

// storedRecordsLimit bounds the decompressed records of a batch the log
// takes from its leader or already holds (reads, recovery), where the
// topic's max.message.bytes is smaller: such a batch passed that limit
// when it was produced, which may have been larger then, so the bound
// only guards against a damaged batch whose CRC happens to pass.
const storedRecordsLimit = 64 << 20

// Config holds the per-topic settings of a log, named after Kafka's topic
// configs. The zero value is usable: zero or negative fields take the
// default where one is stated and otherwise mean "off", so a zero Config
// never deletes data.
type Config struct {
	SegmentBytes       int64         // segment.bytes; ≤0 = 1 GiB
	SegmentMs          time.Duration // segment.ms; ≤0 = never roll by time (DefaultConfig: 7 days)
	IndexIntervalBytes int           // index.interval.bytes; ≤0 = 4096
	RetentionMs        time.Duration // retention.ms; ≤0 = unlimited (DefaultConfig: 7 days)
	RetentionBytes     int64         // retention.bytes; ≤0 = unlimited (default)
	FlushMessages      int64         // flush.messages: fsync after this many messages; ≤0 = never (default)
	FlushMs            time.Duration // flush.ms: fsync at most this long after a write; ≤0 = never (default)
	MaxBatchBytes      int           // max.message.bytes; ≤0 = DefaultMaxBatchBytes
	// ProducerIDExpiration is producer.id.expiration.ms: a producer idle
	// this long is forgotten; ≤0 = DefaultProducerIDExpiration (1 day).
	ProducerIDExpiration time.Duration
	// MaxProducers bounds the producers a partition remembers; past it
	// the longest idle are forgotten first. ≤0 = DefaultMaxProducers.
	MaxProducers int
}

// DefaultConfig returns Kafka's defaults: 1 GiB segments rolled after 7
// days, 7 days of retention, no size limit, fsync left to the OS.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:         defaultSegmentBytes,
		SegmentMs:            defaultRetention,
		IndexIntervalBytes:   defaultIndexInterval,
		RetentionMs:          defaultRetention,
		RetentionBytes:       -1,
		MaxBatchBytes:        DefaultMaxBatchBytes,
		ProducerIDExpiration: DefaultProducerIDExpiration,
		MaxProducers:         DefaultMaxProducers,
	}
}

// normalized fills in defaults for unset fields.
func (c Config) normalized() Config {
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = defaultSegmentBytes
	}
	c.SegmentBytes = min(c.SegmentBytes, maxSegmentBytes)
	if c.IndexIntervalBytes <= 0 {
		c.IndexIntervalBytes = defaultIndexInterval
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.ProducerIDExpiration <= 0 {
		c.ProducerIDExpiration = DefaultProducerIDExpiration
	}
	if c.MaxProducers <= 0 {
		c.MaxProducers = DefaultMaxProducers
	}
	return c
}

// storedLimit bounds the decompressed records of a batch already written
// by a leader (see storedRecordsLimit).
func (c Config) storedLimit() int { return max(c.MaxBatchBytes, storedRecordsLimit) }
