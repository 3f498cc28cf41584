package replica

import (
	"cmp"
	"slices"
)

// PartitionStats is a point-in-time view of one hosted partition for the
// metrics endpoint: gauges from PartitionInfo and counters that only grow
// while the broker runs.
type PartitionStats struct {
	PartitionInfo
	// Produced to this replica as leader: keys and values of decoded
	// records; of records that came encoded (a Kafka producer's batch,
	// the records another broker passed on), their encoding.
	BytesIn, RecordsIn int64
	// Delivered to consumers.
	BytesOut, RecordsOut int64
	// Raw batch bytes sent to followers.
	ReplicationBytesOut int64
	// Committed ISR changes while this replica led.
	ISRShrinks, ISRExpands int64
	// LogFlushes are the fsyncs the log's flush policy (flush.messages,
	// flush.ms) made since the broker started.
	LogFlushes int64
}

// Stats returns one entry per hosted partition, sorted by topic and
// partition. The broker turns it into Prometheus metrics at scrape time
// (a collector calling Stats), so this package registers nothing itself.
func (m *Manager) Stats() []PartitionStats {
	ps := m.hosted()
	out := make([]PartitionStats, 0, len(ps))
	for _, p := range ps {
		out = append(out, PartitionStats{
			PartitionInfo:       p.info(),
			BytesIn:             p.stats.bytesIn.Load(),
			RecordsIn:           p.stats.recordsIn.Load(),
			BytesOut:            p.stats.bytesOut.Load(),
			RecordsOut:          p.stats.recordsOut.Load(),
			ReplicationBytesOut: p.stats.replicaBytesOut.Load(),
			ISRShrinks:          p.stats.isrShrinks.Load(),
			ISRExpands:          p.stats.isrExpands.Load(),
			LogFlushes:          p.log.Flushes(),
		})
	}
	slices.SortFunc(out, func(a, b PartitionStats) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
