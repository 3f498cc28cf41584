package nodeagent

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dataLink is the symlink a projected directory's visible entries point
// through, as in the kubelet's AtomicWriter: a reader sees either the old or
// the new set of files, never a mix.
const dataLink = "..data"

// fileContent is one file of a ConfigMap, Secret, downward-API or projected
// volume.
type fileContent struct {
	data []byte
	mode os.FileMode
}

// writeAtomicDir makes dir hold exactly files (paths relative to dir), and
// reports whether anything changed. New content is written to a fresh
// hidden directory and published by renaming the ..data symlink.
func writeAtomicDir(dir string, files map[string]fileContent) (bool, error) {
	for p := range files {
		if !filepath.IsLocal(p) || strings.HasPrefix(p, "..") {
			return false, fmt.Errorf("volume file path %q must be relative and may not start with '..'", p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	oldTarget, _ := os.Readlink(filepath.Join(dir, dataLink))
	if oldTarget != "" && sameContent(filepath.Join(dir, oldTarget), files) {
		return false, nil
	}

	staging, err := os.MkdirTemp(dir, "..data-")
	if err != nil {
		return false, err
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		return false, err
	}
	for p, f := range files {
		full := filepath.Join(staging, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(full, f.data, f.mode.Perm()); err != nil {
			return false, err
		}
		// WriteFile's mode is subject to the umask; the volume's is not.
		if err := os.Chmod(full, f.mode.Perm()); err != nil {
			return false, err
		}
	}
	tmpLink := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(staging), tmpLink); err != nil {
		return false, err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataLink)); err != nil {
		return false, err
	}

	// Visible entries: one symlink per top-level name, through ..data.
	want := map[string]bool{}
	for p := range files {
		top := strings.SplitN(filepath.ToSlash(p), "/", 2)[0]
		want[top] = true
	}
	for top := range want {
		link := filepath.Join(dir, top)
		target := filepath.Join(dataLink, top)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return false, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == dataLink || name == filepath.Base(staging):
		case strings.HasPrefix(name, "..data-"):
			_ = os.RemoveAll(filepath.Join(dir, name))
		case !want[name] && e.Type()&fs.ModeSymlink != 0:
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
	return true, nil
}

// sameContent reports whether dir holds exactly files.
func sameContent(dir string, files map[string]fileContent) bool {
	seen := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		want, ok := files[rel]
		if !ok {
			return fs.ErrExist
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, want.data) || info.Mode().Perm() != want.mode.Perm() {
			return fs.ErrExist
		}
		seen++
		return nil
	})
	return err == nil && seen == len(files)
}
