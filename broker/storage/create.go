package storage

import (
	"fmt"
	"os"
)

// Create makes the log of a new partition in dir, which must not exist,
// and records topicID in it (partition.metadata) before anything else.
//
// Open on a new directory writes partition.metadata, the format marker
// and the leader-epoch checkpoint, each made durable on its own: eight
// fsyncs and five file creations. A broker given a thousand new partitions
// by one metadata change waits on those one after another, so Create does
// with two fsyncs and two files:
//   - partition.metadata is fsynced before it is renamed into place, as
//     WriteTopicID does: once the directory can hold records it names
//     their topic, whatever crash comes;
//   - the format marker and the leader-epoch checkpoint are not written:
//     the next Open writes the marker once the segments have shown what
//     they hold, and the checkpoint is written by the first epoch the
//     log records (AssignEpoch or a replicated batch), or rebuilt by the
//     next Open from the batches — none until then;
//   - the empty first segment needs no fsync;
//   - one fsync of dir, last, makes every entry in it durable.
//
// The entry of dir in its parent is not made durable here: the caller
// fsyncs the parent with SyncDir once for all the directories it created,
// and before any of their logs takes a write. A crash before that may lose
// a new directory, or keep it without its partition.metadata; either way
// it holds no records, and a directory without a topic id takes the one
// the metadata gives it when it is opened again.
func Create(dir, topicID string, cfg Config) (*Log, error) {
	if !validTopicID(topicID) {
		return nil, fmt.Errorf("storage: create %s: invalid topic id %q", dir, topicID)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage: create: %w", err)
	}
	l, err := createLog(dir, topicID, cfg)
	if err != nil {
		// Nothing half made is left for a later attempt to open as if
		// it were whole: only Create's caller syncs the parent.
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("storage: create %s: %w", dir, err)
	}
	return l, nil
}

// createLog fills the new directory dir and returns its log, in the state
// Open would leave a log without segments in: one empty segment at 0, no
// epochs, no producers.
func createLog(dir, topicID string, cfg Config) (*Log, error) {
	if err := writeTopicIDFile(dir, topicID); err != nil {
		return nil, err
	}
	s, err := createSegment(dir, 0)
	if err != nil {
		return nil, err
	}
	if err := syncDir(dir); err != nil {
		_ = s.close()
		return nil, err
	}
	l := &Log{dir: dir, segs: []*segment{s}, epochs: newEpochCache(), producers: newProducerState()}
	l.SetConfig(cfg)
	return l, nil
}
