package replica

import (
	"strconv"
	"time"

	"github.com/kairolog/kairolog/broker/storage"
	"github.com/kairolog/kairolog/broker/topicconfig"
)

// LogConfigFromTopic turns a topic's config overrides (string values as in
// the API; already validated by the controller, and read within today's
// bounds by the broker, topicconfig.Clamped) into storage settings,
// starting from Kafka's defaults. Keys that are not storage settings
// (min.insync.replicas, unclean.leader.election.enable, cleanup.policy) and
// unparsable values are ignored.
func LogConfigFromTopic(overrides map[string]string) storage.Config {
	c := storage.DefaultConfig()
	num := func(key string, set func(int64)) {
		if v, ok := overrides[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				set(n)
			}
		}
	}
	ms := func(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
	num(topicconfig.SegmentBytes, func(n int64) { c.SegmentBytes = n })
	num(topicconfig.SegmentMs, func(n int64) { c.SegmentMs = ms(n) })
	num(topicconfig.IndexIntervalBytes, func(n int64) { c.IndexIntervalBytes = int(n) })
	num(topicconfig.RetentionMs, func(n int64) { c.RetentionMs = ms(n) })
	num(topicconfig.RetentionBytes, func(n int64) { c.RetentionBytes = n })
	num(topicconfig.FlushMessages, func(n int64) { c.FlushMessages = n })
	num(topicconfig.FlushMs, func(n int64) { c.FlushMs = ms(n) })
	num(topicconfig.MaxMessageBytes, func(n int64) { c.MaxBatchBytes = int(n) })
	return c
}
