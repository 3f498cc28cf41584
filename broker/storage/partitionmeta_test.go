package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestTopicIDRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if id, err := ReadTopicID(dir); id != "" || err != nil {
		t.Fatalf("ReadTopicID of a missing directory = %q, %v; want \"\", nil", id, err)
	}
	const id = "3f6c1a0e-9a43-4c55-a2a3-2c2ab3c2d0b1"
	if err := WriteTopicID(dir, id); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "version: 0\ntopic_id: " + id + "\n"; string(data) != want {
		t.Errorf("partition.metadata = %q, want %q", data, want)
	}
	if got, err := ReadTopicID(dir); got != id || err != nil {
		t.Errorf("ReadTopicID = %q, %v; want %q", got, err, id)
	}
	// A log opened in the directory keeps the file and ignores it.
	l := mustOpen(t, dir, smallConfig())
	if _, _, err := l.Append([]Record{rec(0)}, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, smallConfig())
	defer l.Close()
	if got, err := ReadTopicID(dir); got != id || err != nil || l.LogEndOffset() != 1 {
		t.Errorf("after reopening: topic id %q, %v, log end %d", got, err, l.LogEndOffset())
	}
}

func TestReadTopicIDRejectsMalformedFiles(t *testing.T) {
	for _, content := range []string{
		"",
		"version: 0\n",
		"version: 1\ntopic_id: abc\n",
		"version: 0\ntopic_id: \n",
		"version: 0\ntopic: abc\n",
		"version: 0\ntopic_id: a b\n",
		"version: 0\ntopic_id: abc\nextra\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "partition.metadata"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if id, err := ReadTopicID(dir); !errors.Is(err, ErrCorruptPartitionMetadata) {
			t.Errorf("ReadTopicID(%q) = %q, %v; want ErrCorruptPartitionMetadata", content, id, err)
		}
	}
	// Kafka writes no final newline; both forms are read.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "partition.metadata"), []byte("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := ReadTopicID(dir); id != "AAAAAAAAAAAAAAAAAAAAAQ" || err != nil {
		t.Errorf("ReadTopicID of Kafka's layout = %q, %v", id, err)
	}
}

func TestWriteTopicIDRejectsInvalidIDs(t *testing.T) {
	for _, id := range []string{"", "a b", "a\nb", "a/b", "ü"} {
		if err := WriteTopicID(t.TempDir(), id); err == nil {
			t.Errorf("WriteTopicID(%q) succeeded", id)
		}
	}
}

// FuzzReadTopicID: any file content either yields an id that writes back
// to the same id, or ErrCorruptPartitionMetadata; never a panic.
func FuzzReadTopicID(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: abc\n"))
	f.Add([]byte("version: 0\ntopic_id: abc"))
	f.Add([]byte("version: 0\r\ntopic_id: abc\r\n"))
	f.Add([]byte{0xff, '\n', '\n'})
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "partition.metadata"), content, 0o644); err != nil {
			t.Fatal(err)
		}
		id, err := ReadTopicID(dir)
		if err != nil {
			if !errors.Is(err, ErrCorruptPartitionMetadata) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if err := WriteTopicID(dir, id); err != nil {
			t.Fatalf("id %q read back cannot be written: %v", id, err)
		}
		if again, err := ReadTopicID(dir); again != id || err != nil {
			t.Fatalf("round trip of %q = %q, %v", id, again, err)
		}
	})
}
