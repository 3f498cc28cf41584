package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// layerEntry is one tar entry: a directory, or a regular file whose bytes
// are Data or, when Data is nil, the file at Source.
type layerEntry struct {
	path     string // relative, no leading slash
	dir      bool
	data     []byte
	source   string
	mode     int64
	uid, gid int
}

// withParents adds the missing parent directories of every entry (root
// owned, 0755), as a Dockerfile COPY creates them.
func withParents(entries []layerEntry) []layerEntry {
	have := map[string]bool{}
	for _, e := range entries {
		have[e.path] = true
	}
	out := append([]layerEntry(nil), entries...)
	for _, e := range entries {
		for dir := path.Dir(e.path); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if !have[dir] {
				have[dir] = true
				out = append(out, layerEntry{path: dir, dir: true, mode: 0o755})
			}
		}
	}
	// Byte order puts every directory before what it holds.
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// writeTar writes entries as a tar stream with fixed times and no user or
// group names, so equal entries give equal bytes.
func writeTar(w io.Writer, entries []layerEntry, modTime time.Time) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{
			Name: e.path, Mode: e.mode, Uid: e.uid, Gid: e.gid,
			ModTime: modTime, Format: tar.FormatPAX,
		}
		if e.dir {
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		hdr.Typeflag = tar.TypeReg
		var body io.Reader
		if e.data != nil {
			hdr.Size = int64(len(e.data))
			body = bytes.NewReader(e.data)
		} else {
			f, err := os.Open(e.source)
			if err != nil {
				return fmt.Errorf("%s: %w", e.path, err)
			}
			info, err := f.Stat()
			if err != nil {
				_ = f.Close()
				return err
			}
			if !info.Mode().IsRegular() {
				_ = f.Close()
				return fmt.Errorf("%s: %s is not a regular file", e.path, e.source)
			}
			hdr.Size = info.Size()
			defer f.Close()
			body = f
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, body); err != nil {
			return fmt.Errorf("%s: %w", e.path, err)
		}
	}
	return tw.Close()
}

// buildLayer writes entries as a gzip-compressed tar under scratch and
// returns it as an OCI layer. The gzip header carries no name or time.
func buildLayer(scratch, name string, entries []layerEntry, modTime time.Time) (v1.Layer, error) {
	f, err := os.CreateTemp(scratch, name+"-*.tar.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if err := writeTar(zw, withParents(entries), modTime); err != nil {
		return nil, fmt.Errorf("layer %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return tarball.LayerFromFile(f.Name(), tarball.WithMediaType(types.OCILayer))
}

// relative turns an image path into a tar entry name.
func relative(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }
