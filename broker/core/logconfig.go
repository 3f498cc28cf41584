package core

import (
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/broker/replica"
	"github.com/kairolog/kairolog/broker/storage"
	"github.com/kairolog/kairolog/broker/topicconfig"
)

// logConfig is the storage config of a partition: the topic's overrides
// (a value stored under an older version's bounds read as today's bound,
// topicconfig.Clamped), else the broker's log.* settings.
func logConfig(s config.Settings, overrides map[string]string) storage.Config {
	c := replica.LogConfigFromTopic(topicconfig.Clamped(overrides))
	def := func(key string, apply func()) {
		if _, ok := overrides[key]; !ok {
			apply()
		}
	}
	def(topicconfig.SegmentBytes, func() { c.SegmentBytes = s.LogSegmentBytes })
	def(topicconfig.SegmentMs, func() { c.SegmentMs = s.LogSegmentMs })
	def(topicconfig.RetentionMs, func() { c.RetentionMs = s.LogRetentionMs })
	def(topicconfig.RetentionBytes, func() { c.RetentionBytes = s.LogRetentionBytes })
	def(topicconfig.IndexIntervalBytes, func() { c.IndexIntervalBytes = s.LogIndexIntervalBytes })
	def(topicconfig.FlushMessages, func() { c.FlushMessages = s.LogFlushIntervalMessages })
	def(topicconfig.FlushMs, func() { c.FlushMs = s.LogFlushIntervalMs })
	def(topicconfig.MaxMessageBytes, func() { c.MaxBatchBytes = s.MessageMaxBytes + storage.BatchHeaderSize })
	// A broker setting in Kafka too: no topic overrides it.
	c.ProducerIDExpiration = s.ProducerIDExpiration
	return c
}

// maxBatchBytes is logConfig(s, overrides).MaxBatchBytes without building
// the rest of the config, which every produce would otherwise pay for.
func maxBatchBytes(s config.Settings, overrides map[string]string) int {
	v, ok := overrides[topicconfig.MaxMessageBytes]
	if !ok {
		return s.MessageMaxBytes + storage.BatchHeaderSize
	}
	return logConfig(s, map[string]string{topicconfig.MaxMessageBytes: v}).MaxBatchBytes
}
