package replica

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// hwCheckpointFile keeps every hosted partition's high watermark across
// restarts, in Kafka's replication-offset-checkpoint layout: a version line,
// a count line, then "topic partition offset" per line. Without it a leader
// that restarts would start at HW = log start and answer consumers'
// committed offsets with OffsetOutOfRange until its followers fetch again.
const hwCheckpointFile = "replication-offset-checkpoint"

// hwCheckpointInterval is Kafka's replica.high.watermark.checkpoint.interval.ms.
const hwCheckpointInterval = 5 * time.Second

func readHWCheckpoint(dataDir string) (map[partitionKey]int64, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, hwCheckpointFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	bad := fmt.Errorf("replica: malformed %s", hwCheckpointFile)
	if len(lines) < 2 || lines[0] != "0" {
		return nil, bad
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, bad
	}
	out := make(map[partitionKey]int64, n)
	for _, l := range lines[2:] {
		// Topic names have no spaces (Kafka's name rule).
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, bad
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		hw, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, bad
		}
		out[partitionKey{f[0], int32(p)}] = hw
	}
	return out, nil
}

// writeHWCheckpoint replaces the checkpoint atomically (write, fsync,
// rename).
func writeHWCheckpoint(dataDir string, hws map[partitionKey]int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", len(hws))
	for k, hw := range hws {
		fmt.Fprintf(&b, "%s %d %d\n", k.topic, k.partition, hw)
	}
	path := filepath.Join(dataDir, hwCheckpointFile)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// checkpointHWs writes the high watermarks of every hosted partition. The
// writes are serialised and each reads the hosted set under the lock, so
// the last write always reflects the latest set: a partition deleted before
// a write never reappears in the file through a write that started earlier.
//
// An idle broker neither rewrites nor even gathers its checkpoint:
// while no high watermark moved and the hosted set did not change since
// the last write (hwChanges stood still), the file holds what a new one
// would, and no partition is looked at — the interval's cost does not
// grow with the partitions hosted. The counter is read before the
// gathering and every change counts after it happened, so a change the
// gathering may have missed shows in the counter and is written next
// time. A checkpoint equal to the last one written is not written again
// either (high watermarks moved and came back, a partition left and
// came back).
func (m *Manager) checkpointHWs() {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	changes := m.hwChanges.Load()
	if m.checkpointed != nil && changes == m.checkpointedChanges {
		return
	}
	hosted := m.hosted()
	m.hwsGathered.Add(int64(len(hosted)))
	hws := make(map[partitionKey]int64, len(hosted))
	for _, p := range hosted {
		hws[partitionKey{p.topic, p.id}] = p.HighWatermark()
	}
	if m.checkpointed != nil && maps.Equal(hws, m.checkpointed) {
		m.checkpointedChanges = changes
		return
	}
	if err := writeHWCheckpoint(m.cfg.DataDir, hws); err != nil {
		m.checkpointed = nil // the file may hold anything: write again next time
		m.logger.Warn("Cannot checkpoint high watermarks", "error", err)
		return
	}
	m.checkpointed, m.checkpointedChanges = hws, changes
}
