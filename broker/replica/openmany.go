package replica

import (
	"sync"
	"sync/atomic"
)

// openWorkers bounds how many replicas one metadata change opens at once,
// and how many a starting broker reopens at once. Opening a new replica is
// mostly waiting for the disk (a directory, two files, two fsyncs, two
// more for a leader's epoch), not CPU, so more workers than cores
// help: the file system commits the fsyncs of several of them in one
// journal transaction. A burst of topic creations reaches a broker as
// images that each add tens to hundreds of replicas.
const openWorkers = 8

// openAssigned opens the replicas the image assigns to this broker that it
// does not host yet, openWorkers at a time, and registers them. A created
// directory's entry in the data directory is made durable by one fsync of
// the data directory for all of them, before any is registered: no record
// is written to a replica whose directory a crash could lose.
//
// A replica that will lead once registered (the image is caught up and
// names this broker) gets its leader epoch assigned here, in parallel, so
// becomeLeader finds it recorded and waits on no fsync of its own.
// Failures are logged; the partition is tried again on the next image.
func (m *Manager) openAssigned(known map[partitionKey]PartitionState, caughtUp bool) {
	var want []PartitionState
	m.mu.RLock()
	for key, st := range known {
		if st.hosts(m.cfg.BrokerID) && m.partitions[key] == nil {
			want = append(want, st)
		}
	}
	m.mu.RUnlock()
	if len(want) == 0 {
		return
	}
	type opened struct {
		p       *partition
		created bool
	}
	results := make([]opened, len(want))
	inParallel(len(want), func(i int) {
		st := want[i]
		p, created, err := m.loadPartition(st.Topic, st.Partition, st.TopicID, st.Config, caughtUp)
		if err != nil {
			m.logger.Error("Cannot host partition", "topic", st.Topic, "partition", st.Partition, "error", err)
			return
		}
		if caughtUp && st.Leader == m.cfg.BrokerID {
			// A failure is becomeLeader's to handle: it assigns the
			// epoch again and takes a failed log offline.
			_ = p.log.AssignEpoch(st.LeaderEpoch)
		}
		results[i] = opened{p, created}
	})

	var syncErr error
	for _, r := range results {
		if r.created {
			syncErr = m.syncDataDir()
			break
		}
	}
	for i, r := range results {
		switch {
		case r.p == nil:
		case r.created && syncErr != nil:
			m.logger.Error("Cannot host partition", "topic", r.p.topic, "partition", r.p.id, "error", syncErr)
			discardCreated(r.p)
		default:
			m.register(r.p, want[i].Config)
		}
	}
}

// discardCreated closes and deletes the empty log of a replica created
// here whose directory entry could not be made durable, so the next image
// creates it again (and syncs it) rather than finding it and trusting it.
func discardCreated(p *partition) { _ = p.log.Delete() }

// inParallel calls f(0) … f(n-1), openWorkers at a time, and returns once
// all have returned.
func inParallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(openWorkers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
