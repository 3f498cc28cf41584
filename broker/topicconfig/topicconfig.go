// Package topicconfig is the one table of topic config keys: the key, the
// kind of value it takes, the smallest and largest value the broker
// accepts, and its default. The controller checks every topic config
// change against it (metadata.ValidateConfig), the broker's log.* settings
// take their bounds from it, hack/topicconfig-gen renders the Topic CRD's
// validation rules and the table in docs/configuration.md from it, and
// tests check that all of them agree.
//
// # Minimums
//
// The minimums follow Kafka's LogConfig where KairoLog means the same
// thing, and are stricter where a small value would hurt or would mean
// something else here than in Kafka:
//
//   - segment.bytes ≥ 1 MiB, as Kafka 4.0 (KIP-1030). Every segment holds
//     an open file and two memory-mapped indexes; with 1-byte segments
//     every batch became a segment, and a few thousand segments of a busy
//     partition exhaust a process's file and mapping limits.
//   - segment.ms ≥ 1 s (Kafka: 1 ms). A partition with steady traffic
//     rolls a segment per batch below that, with the same cost.
//   - retention.ms, retention.bytes: -1 (no limit) or ≥ 1. KairoLog reads
//     0 as "no limit" where Kafka reads it as "keep nothing", so 0 is
//     refused rather than silently meaning the opposite.
//   - flush.messages ≥ 1 (as Kafka; 1 fsyncs every write). flush.ms ≥ 1:
//     Kafka's 0 means "fsync at once", KairoLog's meant "never", so 0 is
//     refused; flush.messages=1 is the way to fsync every write.
//   - index.interval.bytes ≥ 1 (Kafka: 0, an entry per batch, which 1
//     gives here; KairoLog read 0 as the 4096 default).
//   - max.message.bytes ≥ 1024 (Kafka: 0). KairoLog read 0 as the default;
//     below 1 KiB a batch's 61-byte header leaves room for almost nothing.
//   - min.insync.replicas ≥ 1.
//
// Values stored before these minimums existed stay readable: the metadata
// state machine checks only that a stored value parses, and the broker
// reads a positive value below the minimum as the minimum (Clamp), so a
// stored segment.bytes=1 rolls 1 MiB segments, while 0 and -1 keep the
// meaning they had when stored.
package topicconfig

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is the kind of value a key takes.
type Kind int

const (
	// Int is a decimal integer in [Min, Max], or NoLimit when the key
	// allows it.
	Int Kind = iota
	// Enum is one of Values.
	Enum
)

// maxMs is the largest millisecond value that is still a time.Duration.
const maxMs = math.MaxInt64 / int64(time.Millisecond)

// NoLimit is the value of retention.ms and retention.bytes that means
// "keep everything".
const NoLimit = -1

// Key is one topic config key.
type Key struct {
	Name string
	Kind Kind
	// Min and Max bound an Int. Unlimited says NoLimit is accepted too.
	Min, Max  int64
	Unlimited bool
	// Values are an Enum's values.
	Values []string
	// Default is the value a topic gets without an override, and
	// BrokerSetting the broker setting that changes it ("" when none does).
	Default       string
	BrokerSetting string
	// Unit and Doc describe the key in docs/configuration.md.
	Unit string
	Doc  string
}

// Names of the keys other packages read.
const (
	SegmentBytes       = "segment.bytes"
	SegmentMs          = "segment.ms"
	RetentionMs        = "retention.ms"
	RetentionBytes     = "retention.bytes"
	CleanupPolicy      = "cleanup.policy"
	MinInsyncReplicas  = "min.insync.replicas"
	UncleanElection    = "unclean.leader.election.enable"
	FlushMessages      = "flush.messages"
	FlushMs            = "flush.ms"
	MaxMessageBytes    = "max.message.bytes"
	IndexIntervalBytes = "index.interval.bytes"
	CompressionType    = "compression.type"
)

// Keys is the table, in the order the docs list it.
var Keys = []Key{
	{Name: RetentionMs, Kind: Int, Min: 1, Max: maxMs, Unlimited: true, Default: "604800000", BrokerSetting: "log.retention.ms",
		Unit: "ms", Doc: "age past which whole old segments are deleted; -1 keeps them forever"},
	{Name: RetentionBytes, Kind: Int, Min: 1, Max: math.MaxInt64, Unlimited: true, Default: "-1", BrokerSetting: "log.retention.bytes",
		Unit: "bytes", Doc: "partition size past which whole old segments are deleted; -1 = no limit"},
	{Name: SegmentBytes, Kind: Int, Min: 1 << 20, Max: math.MaxInt32, Default: "1073741824", BrokerSetting: "log.segment.bytes",
		Unit: "bytes", Doc: "segment size before a new segment is rolled"},
	{Name: SegmentMs, Kind: Int, Min: 1000, Max: maxMs, Default: "604800000", BrokerSetting: "log.roll.ms",
		Unit: "ms", Doc: "age of a segment before a new one is rolled"},
	{Name: CleanupPolicy, Kind: Enum, Values: []string{"delete"}, Default: "delete",
		Doc: "what happens to old segments: deleted (compaction is not supported)"},
	{Name: MinInsyncReplicas, Kind: Int, Min: 1, Max: math.MaxInt16, Default: "1", BrokerSetting: "min.insync.replicas",
		Doc: "in-sync replicas an acks=all produce needs; at most the topic's replicas"},
	{Name: UncleanElection, Kind: Enum, Values: []string{"true", "false"}, Default: "false", BrokerSetting: "unclean.leader.election.enable",
		Doc: "let an out-of-sync replica lead when no in-sync one is alive (it may lose acknowledged records)"},
	{Name: FlushMessages, Kind: Int, Min: 1, Max: math.MaxInt64, Default: "unset", BrokerSetting: "log.flush.interval.messages",
		Unit: "messages", Doc: "fsync after this many messages; 1 fsyncs every write; unset leaves it to the OS"},
	{Name: FlushMs, Kind: Int, Min: 1, Max: maxMs, Default: "unset", BrokerSetting: "log.flush.interval.ms",
		Unit: "ms", Doc: "fsync at most this long after a write; unset leaves it to the OS"},
	{Name: MaxMessageBytes, Kind: Int, Min: 1024, Max: math.MaxInt32, Default: "1048637", BrokerSetting: "message.max.bytes",
		Unit: "bytes", Doc: "largest batch, its 61-byte header included, one produce may write to a partition (413 RECORD_TOO_LARGE); the default is `message.max.bytes` plus that header"},
	{Name: IndexIntervalBytes, Kind: Int, Min: 1, Max: math.MaxInt32, Default: "4096", BrokerSetting: "log.index.interval.bytes",
		Unit: "bytes", Doc: "bytes between two sparse index entries; 1 indexes every batch"},
	{Name: CompressionType, Kind: Enum, Values: []string{"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
		Default: "producer", BrokerSetting: "compression.type",
		Doc: "codec of the batches an HTTP produce writes; `producer` keeps the producer's, which over HTTP is none. `max.message.bytes` bounds a batch uncompressed"},
}

// Errors of Validate and Parse, wrapped with the key and value.
var (
	ErrUnknownKey = errors.New("unknown topic config key")
	ErrBadValue   = errors.New("invalid topic config value")
)

// Lookup returns the key called name.
func Lookup(name string) (Key, bool) {
	i := slices.IndexFunc(Keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return Keys[i], true
}

// Names lists the keys in table order.
func Names() []string {
	out := make([]string, len(Keys))
	for i, k := range Keys {
		out[i] = k.Name
	}
	return out
}

// Parse checks that v is a value of k's kind (an integer, one of the enum's
// values) without checking its bounds: what the metadata state machine
// requires of a stored value, which an older version may have accepted
// under other bounds.
func (k Key) Parse(v string) error {
	switch k.Kind {
	case Enum:
		if !slices.Contains(k.Values, v) {
			return fmt.Errorf("%w: %s=%q: want %s", ErrBadValue, k.Name, v, strings.Join(k.Values, " or "))
		}
	case Int:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("%w: %s=%q: not an integer", ErrBadValue, k.Name, v)
		}
	}
	return nil
}

// Check is Parse plus the bounds: what a new value must meet.
func (k Key) Check(v string) error {
	if err := k.Parse(v); err != nil || k.Kind != Int {
		return err
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	if k.Unlimited && n == NoLimit || n >= k.Min && n <= k.Max {
		return nil
	}
	return fmt.Errorf("%w: %s=%q: %s", ErrBadValue, k.Name, v, k.Range())
}

// Range says which integers k accepts, as the errors and the docs say it.
func (k Key) Range() string {
	r := fmt.Sprintf("an integer from %d to %d", k.Min, k.Max)
	if k.Unlimited {
		r = fmt.Sprintf("-1 (no limit) or %s", r)
	}
	return r
}

// Clamp reads a stored integer value the way the broker applies it: a
// positive value below the minimum (stored under an older version's
// bounds) counts as the minimum, one above the maximum as the maximum.
// Zero and negative values keep the meaning the storage gives them (no
// limit for retention, never for flushes, the default otherwise), which
// is what they meant when they were stored. ok is false for a value that
// does not parse.
func (k Key) Clamp(v string) (n int64, ok bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || k.Kind != Int {
		return n, false
	}
	if n <= 0 {
		return n, true
	}
	return min(max(n, k.Min), k.Max), true
}

// Clamped returns cfg with every integer value read as Clamp reads it, for
// the broker to apply; values that do not parse are left out (the
// metadata never holds one).
func Clamped(cfg map[string]string) map[string]string {
	out := make(map[string]string, len(cfg))
	for name, v := range cfg {
		k, known := Lookup(name)
		switch {
		case !known || k.Kind != Int:
			out[name] = v
		default:
			if n, ok := k.Clamp(v); ok {
				out[name] = strconv.FormatInt(n, 10)
			}
		}
	}
	return out
}

// Validate checks a topic config change: every key known, every value
// within its bounds.
func Validate(cfg map[string]string) error {
	for _, name := range sortedKeys(cfg) {
		k, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("%w %q (known: %s)", ErrUnknownKey, name, strings.Join(Names(), ", "))
		}
		if err := k.Check(cfg[name]); err != nil {
			return err
		}
	}
	return nil
}

// ValidateStored checks a stored topic config: every key known, every
// value parsable (see Parse).
func ValidateStored(cfg map[string]string) error {
	for _, name := range sortedKeys(cfg) {
		k, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("%w %q", ErrUnknownKey, name)
		}
		if err := k.Parse(cfg[name]); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys makes the first error of a config with several bad keys the
// same every time.
func sortedKeys(cfg map[string]string) []string {
	names := make([]string, 0, len(cfg))
	for k := range cfg {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
