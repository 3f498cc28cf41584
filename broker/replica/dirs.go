package replica

// The partition directories of a broker: reopened at start, created with
// their topic id, told apart from a deleted topic's, deleted.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kairolog/kairolog/broker/storage"
)

// openExisting reopens the partition directories left by a previous run,
// openWorkers at a time, each with the topic id it records. Whether that
// id is still the topic's is only known once the metadata has caught up
// (reconcile).
func (m *Manager) openExisting() error {
	entries, err := os.ReadDir(m.cfg.DataDir)
	if err != nil {
		return err
	}
	hws, err := readHWCheckpoint(m.cfg.DataDir)
	if err != nil {
		// Only costs consumers a short wait until followers fetch again.
		m.logger.Warn("Ignoring high watermark checkpoint", "error", err)
	}
	var keys []partitionKey
	for _, e := range entries {
		if topic, partition, ok := parsePartitionDir(e.Name()); e.IsDir() && ok {
			keys = append(keys, partitionKey{topic, partition})
		}
	}
	errs := make([]error, len(keys))
	inParallel(len(keys), func(i int) {
		key := keys[i]
		p, err := m.openPartition(key.topic, key.partition, "", nil, false)
		if errors.Is(err, storage.ErrCorruptPartitionMetadata) {
			// Neither served nor deleted: which topic it holds is unknown.
			m.logger.Error("Cannot host partition", "topic", key.topic, "partition", key.partition, "error", err)
			return
		}
		if err != nil {
			errs[i] = err
			return
		}
		if hw, ok := hws[key]; ok {
			p.hw = min(max(hw, p.log.LogStartOffset()), p.log.LogEndOffset())
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	m.hwChanges.Add(1) // the high watermarks read back
	return nil
}

// partitionDir is DATA/<topic>-<partition>, as Kafka names it.
func partitionDir(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

func parsePartitionDir(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return name[:i], int32(n), true
}

// openPartition opens (creating if needed) the log of one partition and
// registers it; only the metadata goroutine and NewManager call it.
func (m *Manager) openPartition(topic string, partition int32, topicID string, overrides map[string]string, deleteStale bool) (*partition, error) {
	p, created, err := m.loadPartition(topic, partition, topicID, overrides, deleteStale)
	if err != nil {
		return nil, err
	}
	if created {
		if err := m.syncDataDir(); err != nil {
			discardCreated(p)
			return nil, err
		}
	}
	m.register(p, overrides)
	return p, nil
}

// loadPartition opens the log of one partition without registering it;
// created reports a directory made by storage.Create, whose entry in the
// data directory is not durable until syncDataDir.
//
// topicID is the partition's topic id in the metadata, "" when unknown
// (reopening at start, or tests). A directory recorded with another id
// belongs to a deleted topic of the same name: with deleteStale (the
// metadata is caught up) it is deleted and the log starts afresh, otherwise
// opening fails. A directory without an id (written before topic ids)
// takes topicID. A new directory records topicID before its first segment
// exists, so every directory holding data names its topic.
func (m *Manager) loadPartition(topic string, partition int32, topicID string, overrides map[string]string, deleteStale bool) (p *partition, created bool, err error) {
	dir := filepath.Join(m.cfg.DataDir, partitionDir(topic, partition))
	if topicID != "" {
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			lg, err := storage.Create(dir, topicID, m.cfg.LogConfig(overrides))
			if err != nil {
				return nil, false, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
			}
			return newPartition(topic, topicID, partition, lg, m.env), true, nil
		}
	}
	onDisk, err := storage.ReadTopicID(dir)
	if err != nil {
		return nil, false, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
	}
	if topicID != "" && onDisk != topicID {
		if onDisk != "" {
			if !deleteStale {
				return nil, false, fmt.Errorf("open partition %s-%d: %s holds topic id %s, not %s; kept until the metadata has caught up",
					topic, partition, dir, onDisk, topicID)
			}
			if err := m.deleteStaleDir(dir, topic, partition, onDisk, topicID); err != nil {
				return nil, false, err
			}
		}
		if err := storage.WriteTopicID(dir, topicID); err != nil {
			return nil, false, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
		}
		onDisk = topicID
	}
	lg, err := storage.Open(dir, m.cfg.LogConfig(overrides))
	if err != nil {
		return nil, false, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
	}
	return newPartition(topic, onDisk, partition, lg, m.env), false, nil
}

// syncDataDir makes the entries of the partition directories created in
// the data directory durable; a replica is registered, and so used, only
// after the sync that covers its directory.
func (m *Manager) syncDataDir() error {
	if err := syncDir(m.cfg.DataDir); err != nil {
		return fmt.Errorf("sync %s: %w", m.cfg.DataDir, err)
	}
	return nil
}

// syncDir is storage.SyncDir; tests make it fail, as a failing fsync
// cannot be produced for real without a faulty device.
var syncDir = storage.SyncDir

// register makes an opened partition one this broker hosts.
func (m *Manager) register(p *partition, overrides map[string]string) {
	key := partitionKey{p.topic, p.id}
	m.mu.Lock()
	m.partitions[key] = p
	m.configs[key] = overrides
	m.hwChanges.Add(1) // the checkpoint gains a line
	m.mu.Unlock()
}

// deleteStaleDir removes a partition directory left by a deleted topic of
// the same name. The high watermark checkpoint is rewritten first, without
// the stale replica, so a crash right after cannot lend its high watermark
// to the new topic's log.
func (m *Manager) deleteStaleDir(dir, topic string, partition int32, staleID, topicID string) error {
	m.checkpointHWs()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("delete stale partition %s-%d: %w", topic, partition, err)
	}
	m.logger.Warn("Deleted the replica of an earlier topic of the same name", "topic", topic, "partition", partition,
		"stale_topic_id", staleID, "topic_id", topicID)
	return nil
}

// removePartitions stops hosting partitions and deletes their directories.
func (m *Manager) removePartitions(keys ...partitionKey) {
	var removed []*partition
	m.mu.Lock()
	for _, key := range keys {
		if p := m.partitions[key]; p != nil {
			removed = append(removed, p)
		}
		delete(m.partitions, key)
		delete(m.configs, key)
	}
	m.hwChanges.Add(1) // the checkpoint loses lines
	m.mu.Unlock()
	if len(removed) == 0 {
		return
	}
	// Out of the high watermark checkpoint before the directories go: a
	// partition created again under the same name must not inherit one.
	m.checkpointHWs()
	for _, p := range removed {
		wasLeader, epoch := p.leadership()
		p.close()
		// Told before the directory goes, so that whoever sees it gone
		// has seen the leadership end too.
		if wasLeader && m.cfg.OnLeadershipChange != nil {
			m.cfg.OnLeadershipChange(p.topic, p.id, false, epoch)
		}
		if err := p.log.Delete(); err != nil {
			m.logger.Error("Cannot delete partition", "topic", p.topic, "partition", p.id, "error", err)
		}
		m.logger.Info("Deleted partition", "topic", p.topic, "partition", p.id)
	}
}
