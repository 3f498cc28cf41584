package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A producer snapshot, <offset>.snapshot beside the segments (Kafka's
// name), holds the producer state as it was when the log ended at offset,
// so that Open replays only the batches after the latest one (Kafka keeps
// one per segment, as here). Unlike Kafka's it keeps every retained batch
// of each producer, not only the last, so that deduplication after a
// restart is what it was before. All integers are big-endian:
//
//	version   int16  1
//	crc       uint32 CRC-32C of everything after this field
//	count     int32  producers
//	count ×   id int64, epoch int16, lastSeen int64 (Unix ms), batches int8,
//	          batches × (firstSeq int32, lastSeq int32, firstOffset int64, lastOffset int64)
//
// A snapshot is written to a temporary file and renamed into place; one
// that fails its checks (torn by a crash, damaged) is deleted and an
// older one, or the log itself, is used instead.
const (
	snapshotSuffix  = ".snapshot"
	snapshotVersion = 1
	snapshotHeader  = 2 + 4 + 4
	snapshotEntry   = 8 + 2 + 8 + 1
	snapshotBatch   = 4 + 4 + 8 + 8
)

var errSnapshotCorrupt = errors.New("storage: corrupt producer snapshot")

func snapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, snapshotSuffix))
}

// encodeProducerSnapshot serialises ps, producers in id order so that
// equal states give equal files.
func encodeProducerSnapshot(ps *producerState) []byte {
	ids := make([]int64, 0, len(ps.producers))
	for id := range ps.producers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	be := binary.BigEndian
	b := make([]byte, snapshotHeader, snapshotHeader+len(ids)*(snapshotEntry+retainedBatches*snapshotBatch))
	be.PutUint16(b, snapshotVersion)
	be.PutUint32(b[6:], uint32(len(ids)))
	for _, id := range ids {
		e := ps.producers[id]
		b = be.AppendUint64(b, uint64(id))
		b = be.AppendUint16(b, uint16(e.Epoch))
		b = be.AppendUint64(b, uint64(e.LastSeen))
		b = append(b, byte(len(e.Batches)))
		for _, pb := range e.Batches {
			b = be.AppendUint32(b, uint32(pb.FirstSeq))
			b = be.AppendUint32(b, uint32(pb.LastSeq))
			b = be.AppendUint64(b, uint64(pb.FirstOffset))
			b = be.AppendUint64(b, uint64(pb.LastOffset))
		}
	}
	be.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

// decodeProducerSnapshot parses a snapshot taken at offset: every batch
// it names must lie below offset. Anything else is errSnapshotCorrupt.
func decodeProducerSnapshot(b []byte, offset int64) (*producerState, error) {
	corrupt := func(what string) error { return fmt.Errorf("%w: %s", errSnapshotCorrupt, what) }
	be := binary.BigEndian
	if len(b) < snapshotHeader {
		return nil, corrupt("short header")
	}
	if v := be.Uint16(b); v != snapshotVersion {
		return nil, corrupt(fmt.Sprintf("version %d", v))
	}
	if crc32.Checksum(b[6:], castagnoli) != be.Uint32(b[2:]) {
		return nil, corrupt("CRC mismatch")
	}
	count := int64(be.Uint32(b[6:]))
	if count > int64(len(b)-snapshotHeader)/snapshotEntry {
		return nil, corrupt(fmt.Sprintf("%d producers in %d bytes", count, len(b)))
	}
	ps := newProducerState()
	p := snapshotHeader
	for range count {
		if len(b)-p < snapshotEntry {
			return nil, corrupt("torn producer")
		}
		id := int64(be.Uint64(b[p:]))
		e := &producerEntry{Epoch: int16(be.Uint16(b[p+8:])), LastSeen: int64(be.Uint64(b[p+10:]))}
		n := int(b[p+18])
		p += snapshotEntry
		if id < 0 || e.Epoch < 0 || n > retainedBatches || len(b)-p < n*snapshotBatch || ps.producers[id] != nil {
			return nil, corrupt(fmt.Sprintf("producer %d", id))
		}
		for range n {
			pb := producerBatch{FirstSeq: int32(be.Uint32(b[p:])), LastSeq: int32(be.Uint32(b[p+4:])),
				FirstOffset: int64(be.Uint64(b[p+8:])), LastOffset: int64(be.Uint64(b[p+16:]))}
			p += snapshotBatch
			if pb.FirstSeq < 0 || pb.LastSeq < 0 || pb.FirstOffset < 0 || pb.LastOffset < pb.FirstOffset || pb.LastOffset >= offset {
				return nil, corrupt(fmt.Sprintf("producer %d batch at %d", id, pb.FirstOffset))
			}
			e.Batches = append(e.Batches, pb)
		}
		ps.producers[id] = e
	}
	if p != len(b) {
		return nil, corrupt("bytes after the last producer")
	}
	return ps, nil
}

// writeProducerSnapshot writes the snapshot of ps at offset, with fsyncs
// when sync is set (Close); a snapshot taken at a roll is fsynced by the
// next Close, and until then a crash may lose it, which costs only a
// longer replay.
func writeProducerSnapshot(dir string, offset int64, ps *producerState, sync bool) error {
	path := snapshotPath(dir, offset)
	data := encodeProducerSnapshot(ps)
	if sync {
		if err := writeFileSync(path+tmpSuffix, data); err != nil {
			return err
		}
	} else if err := os.WriteFile(path+tmpSuffix, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+tmpSuffix, path); err != nil {
		return err
	}
	if sync {
		return syncDir(dir)
	}
	return nil
}

// listSnapshots returns the offsets of the producer snapshots in dir, in
// order.
func listSnapshots(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), snapshotSuffix)
		if !ok || len(name) != 20 {
			continue
		}
		if base, _, ok := parseSegmentName(name + logSuffix); ok {
			out = append(out, base)
		}
	}
	slices.Sort(out)
	return out, nil
}

// removeSnapshots deletes the snapshots whose offsets drop says.
func removeSnapshots(dir string, drop func(offset int64) bool) error {
	offsets, err := listSnapshots(dir)
	if err != nil {
		return err
	}
	removed := false
	for _, off := range offsets {
		if drop(off) {
			if err := os.Remove(snapshotPath(dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			removed = true
		}
	}
	if removed {
		return syncDir(dir)
	}
	return nil
}

// latestSnapshot loads the newest snapshot at or below end that passes
// its checks, deleting the ones that do not. It returns (nil, -1) when
// there is none.
func latestSnapshot(dir string, end int64) (*producerState, int64, error) {
	offsets, err := listSnapshots(dir)
	if err != nil {
		return nil, -1, err
	}
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		if off > end {
			continue
		}
		data, err := os.ReadFile(snapshotPath(dir, off))
		if err != nil {
			return nil, -1, err
		}
		ps, err := decodeProducerSnapshot(data, off)
		if err == nil {
			return ps, off, nil
		}
		if err := os.Remove(snapshotPath(dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, -1, err
		}
	}
	return nil, -1, nil
}
