package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// partitionMetadataFile names the topic a partition directory belongs to,
// in Kafka's layout (KIP-516):
//
//	version: 0
//	topic_id: <id>
//
// A topic deleted and created again under the same name gets a new id, so
// a directory left over from the old topic — by a broker that was away
// while it happened — is told apart from the new one by this file alone.
const partitionMetadataFile = "partition.metadata"

// ErrCorruptPartitionMetadata reports a partition.metadata that cannot be
// parsed.
var ErrCorruptPartitionMetadata = errors.New("storage: corrupt partition.metadata")

// ReadTopicID returns the topic id recorded in dir. A directory without the
// file (or without the directory itself) has no id: "" and no error.
func ReadTopicID(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return "", fmt.Errorf("%w in %s: %q", ErrCorruptPartitionMetadata, dir, data)
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "topic_id:")
	id = strings.TrimSpace(id)
	if !ok || !validTopicID(id) {
		return "", fmt.Errorf("%w in %s: %q", ErrCorruptPartitionMetadata, dir, data)
	}
	return id, nil
}

// WriteTopicID records id as the topic of the partition in dir, creating
// the directory if needed. The file is replaced atomically and made
// durable (fsync of the file and of the directory) before it returns, so a
// directory that holds any data after a crash also holds its topic id.
func WriteTopicID(dir, id string) error {
	if !validTopicID(id) {
		return fmt.Errorf("storage: invalid topic id %q", id)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeTopicIDFile(dir, id); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	// And the directory's own entry, for a directory created just now.
	return syncDir(filepath.Dir(dir))
}

// writeTopicIDFile puts partition.metadata in place with its contents
// durable, but not yet its directory entry: it is renamed into place only
// after its fsync, so a crash leaves either no file or the whole of it.
func writeTopicIDFile(dir, id string) error {
	path := filepath.Join(dir, partitionMetadataFile)
	if err := writeFileSync(path+tmpSuffix, []byte("version: 0\ntopic_id: "+id+"\n")); err != nil {
		return err
	}
	return os.Rename(path+tmpSuffix, path)
}

// validTopicID accepts what topic ids are made of: a UUID in its text form
// or Kafka's URL-safe base64 of one.
func validTopicID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
