package core

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/kairolog/kairolog/broker/api"
)

// LogDir is this broker's data directory, the size and free space of its
// file system, and every replica it hosts there with its bytes on disk.
// It never fails; the error is for a front door's authorization in front
// of it.
func (b *Broker) LogDir(context.Context) (api.LogDir, error) {
	dir := api.LogDir{Path: b.cfg.DataDir, TotalBytes: -1, UsableBytes: -1}
	if abs, err := filepath.Abs(dir.Path); err == nil {
		dir.Path = abs
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir.Path, &fs) == nil {
		dir.TotalBytes = int64(fs.Blocks) * fs.Bsize
		dir.UsableBytes = int64(fs.Bavail) * fs.Bsize
	}
	for _, s := range b.replicas.Stats() {
		dir.Replicas = append(dir.Replicas, api.ReplicaSize{Topic: s.Topic, Partition: s.Partition,
			SizeBytes: s.SizeBytes, OffsetLag: max(s.HighWatermark-s.LogEndOffset, 0)})
	}
	return dir, nil
}
