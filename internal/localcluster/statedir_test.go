package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaimStateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	lock, err := claimStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "etcd", "member"), 0o755); err != nil {
		t.Fatal(err)
	}

	// A second cluster may not use the directory while the first runs.
	if _, err := claimStateDir(dir); !errors.Is(err, ErrStateDirInUse) {
		t.Fatalf("second claim: err = %v, want ErrStateDirInUse", err)
	}
	_ = lock.Close()

	// The next start gets a clean directory.
	lock, err = claimStateDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != stateMarker {
		t.Errorf("state directory after restart holds %v", entries)
	}
}

func TestClaimStateDirRefusesForeignDirectories(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := claimStateDir(dir); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("a foreign file was touched: %v", err)
	}
}
