package imagestore

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// ErrUnsafeLayer means a layer holds an entry that would write outside the
// image's root, or a kind of file the node does not create.
var ErrUnsafeLayer = errors.New("unsafe layer entry")

// OCI whiteout markers.
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// applyLayer applies one uncompressed layer (a tar stream) on top of the
// directory root holds. It stops at the first unsafe entry.
func applyLayer(root *os.Root, r io.Reader) error {
	tr := tar.NewReader(r)
	// Entries of this layer: an opaque marker hides only lower layers'.
	own := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read layer: %w", err)
		}
		name, err := entryName(hdr.Name)
		if err != nil {
			return err
		}
		if name == "." {
			continue // the root itself keeps the store's ownership and mode
		}
		dir, base := path.Split(name)
		dir = path.Clean("./" + dir)
		switch {
		case base == opaqueMarker:
			if err := hideLower(root, dir, own); err != nil {
				return err
			}
			continue
		case strings.HasPrefix(base, whiteoutPrefix):
			victim := path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix))
			if err := root.RemoveAll(victim); err != nil {
				return fmt.Errorf("whiteout %s: %w", victim, err)
			}
			continue
		}
		if err := applyEntry(root, name, hdr, tr); err != nil {
			return err
		}
		own[name] = true
	}
}

// entryName checks a tar entry's name and returns it relative to the
// root, cleaned ("./usr/bin/" → "usr/bin").
func entryName(raw string) (string, error) {
	if strings.HasPrefix(raw, "/") {
		return "", fmt.Errorf("%w: %q is an absolute path", ErrUnsafeLayer, raw)
	}
	name := path.Clean(raw)
	if name != "." && !localPath(name) {
		return "", fmt.Errorf("%w: %q leaves the root", ErrUnsafeLayer, raw)
	}
	return name, nil
}

// localPath reports whether a cleaned slash-separated path stays below the
// directory it is relative to.
func localPath(p string) bool {
	return p != ".." && !strings.HasPrefix(p, "../") && !strings.HasPrefix(p, "/") && !strings.ContainsRune(p, 0)
}

// hideLower removes what lower layers put in dir (an opaque directory),
// keeping this layer's own entries.
func hideLower(root *os.Root, dir string, own map[string]bool) error {
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opaque directory %s: %w", dir, err)
	}
	entries, err := f.ReadDir(-1)
	_ = f.Close()
	if err != nil {
		return fmt.Errorf("opaque directory %s: %w", dir, err)
	}
	for _, e := range entries {
		child := path.Join(dir, e.Name())
		if own[child] {
			continue
		}
		if err := root.RemoveAll(child); err != nil {
			return fmt.Errorf("opaque directory %s: %w", dir, err)
		}
	}
	return nil
}

// applyEntry creates one file, directory or link, replacing what lower
// layers had at name (a directory only by something that is not one).
func applyEntry(root *os.Root, name string, hdr *tar.Header, body io.Reader) error {
	existing, statErr := root.Lstat(name)
	exists := statErr == nil
	replace := func() error {
		if exists && !(existing.IsDir() && hdr.Typeflag == tar.TypeDir) {
			return root.RemoveAll(name)
		}
		return nil
	}
	mode := hdr.FileInfo().Mode()
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := replace(); err != nil {
			return err
		}
		if !exists || !existing.IsDir() {
			if err := root.Mkdir(name, 0o700); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archivers still write TypeRegA
		if err := replace(); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := io.Copy(f, body); err != nil {
			_ = f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := checkSymlink(name, hdr.Linkname); err != nil {
			return err
		}
		if err := replace(); err != nil {
			return err
		}
		if err := root.Symlink(hdr.Linkname, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return root.Lchown(name, hdr.Uid, hdr.Gid)
	case tar.TypeLink:
		target, err := entryName(hdr.Linkname)
		if err != nil || target == "." {
			return fmt.Errorf("%w: hard link %s → %q leaves the root", ErrUnsafeLayer, name, hdr.Linkname)
		}
		info, err := root.Lstat(target)
		if err != nil {
			return fmt.Errorf("hard link %s → %s: %w", name, target, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%w: hard link %s → %s, which is not a regular file", ErrUnsafeLayer, name, target)
		}
		if err := replace(); err != nil {
			return err
		}
		if err := root.Link(target, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil // the link shares its target's owner and mode
	default:
		return fmt.Errorf("%w: %s is a %s, which this node does not create", ErrUnsafeLayer, name, typeName(hdr.Typeflag))
	}
	if err := root.Lchown(name, hdr.Uid, hdr.Gid); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// After chown, which clears the set-user-ID and set-group-ID bits.
	if err := root.Chmod(name, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if hdr.Typeflag != tar.TypeDir {
		return root.Chtimes(name, hdr.ModTime, hdr.ModTime)
	}
	return nil
}

// checkSymlink refuses a link whose target is absolute or climbs out of
// the root from where the link is.
func checkSymlink(name, target string) error {
	if target == "" || strings.HasPrefix(target, "/") {
		return fmt.Errorf("%w: symbolic link %s → %q is absolute", ErrUnsafeLayer, name, target)
	}
	if resolved := path.Join(path.Dir(name), target); !localPath(resolved) {
		return fmt.Errorf("%w: symbolic link %s → %q leaves the root", ErrUnsafeLayer, name, target)
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}
