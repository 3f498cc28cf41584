package nodeagent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomicDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	files := map[string]fileContent{
		"broker.properties": {data: []byte("segment.bytes=1024\n"), mode: 0o644},
		"nested/key":        {data: []byte("v1"), mode: 0o600},
	}
	changed, err := writeAtomicDir(dir, files)
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	readFile := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := readFile("broker.properties"); got != "segment.bytes=1024\n" {
		t.Errorf("broker.properties = %q", got)
	}
	if got := readFile("nested/key"); got != "v1" {
		t.Errorf("nested/key = %q", got)
	}
	info, err := os.Stat(filepath.Join(dir, "nested/key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("nested/key mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}

	// Same content: nothing is rewritten.
	if changed, err := writeAtomicDir(dir, files); err != nil || changed {
		t.Fatalf("rewrite of same content: changed=%v err=%v", changed, err)
	}

	// A key is updated and another removed: the directory follows.
	changed, err = writeAtomicDir(dir, map[string]fileContent{
		"broker.properties": {data: []byte("segment.bytes=2048\n"), mode: 0o644},
	})
	if err != nil || !changed {
		t.Fatalf("update: changed=%v err=%v", changed, err)
	}
	if got := readFile("broker.properties"); got != "segment.bytes=2048\n" {
		t.Errorf("after update broker.properties = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "nested")); !os.IsNotExist(err) {
		t.Errorf("removed key still visible: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var staging int
	for _, e := range entries {
		if len(e.Name()) > 7 && e.Name()[:7] == "..data-" {
			staging++
		}
	}
	if staging != 1 {
		t.Errorf("%d generations left on disk, want 1", staging)
	}

	if _, err := writeAtomicDir(dir, map[string]fileContent{"../escape": {data: nil, mode: 0o644}}); err == nil {
		t.Error("a path escaping the volume was accepted")
	}
}
