package imagestore

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// unpackedImage is written next to an unpacked root filesystem
// (rootfs/<hex>.json): what a runtime needs without the registry.
type unpackedImage struct {
	Config v1.Config `json:"config"`
	Size   int64     `json:"size"`
}

// unpack makes sure the image's layers are cached and its root filesystem
// exists, and returns how many layer bytes it downloaded.
func (s *Store) unpack(ctx context.Context, digest v1.Hash, img v1.Image) (int64, error) {
	l := s.lock(digest.String())
	l.Lock()
	defer l.Unlock()
	dir := s.rootfsDir(digest)
	if _, err := os.Stat(dir + ".json"); err == nil {
		return 0, nil // unpacked by an earlier pull
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return 0, fmt.Errorf("image configuration: %w", err)
	}
	if cf.OS != "" && cf.OS != "linux" {
		return 0, fmt.Errorf("image is for %s, not linux", cf.OS)
	}
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	var fetched, size int64
	var blobs []string
	for _, layer := range layers {
		n, path, err := s.fetchLayer(ctx, layer)
		if err != nil {
			return fetched, err
		}
		fetched += n
		blobs = append(blobs, path)
		if sz, err := layer.Size(); err == nil {
			size += sz
		}
	}

	_ = os.RemoveAll(dir) // a half-unpacked leftover of a crashed node
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".unpack-"+digest.Hex[:12]+"-")
	if err != nil {
		return fetched, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fetched, err
	}
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return fetched, err
	}
	defer root.Close()
	for i, blob := range blobs {
		if err := applyBlob(root, blob); err != nil {
			return fetched, fmt.Errorf("layer %d of %d: %w", i+1, len(blobs), err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fetched, err
	}
	meta, err := json.Marshal(unpackedImage{Config: cf.Config, Size: size})
	if err != nil {
		return fetched, err
	}
	// Written last: its presence means the root filesystem is complete.
	return fetched, writeFileAtomic(dir+".json", meta)
}

// fetchLayer downloads a layer's compressed blob into the cache unless it
// is there, verifying its digest on the way, and returns the bytes
// downloaded and the blob's path.
func (s *Store) fetchLayer(ctx context.Context, layer v1.Layer) (int64, string, error) {
	digest, err := layer.Digest()
	if err != nil {
		return 0, "", err
	}
	path := s.blobPath(digest)
	l := s.lock(digest.String())
	l.Lock()
	defer l.Unlock()
	if _, err := os.Stat(path); err == nil {
		return 0, path, nil
	}
	rc, err := layer.Compressed() // verifies the digest as it is read
	if err != nil {
		return 0, "", fmt.Errorf("fetch layer %s: %w", digest, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fetch-*")
	if err != nil {
		return 0, "", err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, ctxReader{ctx, rc})
	if err == nil {
		err = tmp.Close()
	} else {
		_ = tmp.Close()
	}
	if err != nil {
		return n, "", fmt.Errorf("fetch layer %s: %w", digest, err)
	}
	return n, path, os.Rename(tmp.Name(), path)
}

// ctxReader stops a download when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// applyBlob decompresses a cached layer (gzip, zstd or none) as it
// streams it into root.
func applyBlob(root *os.Root, blob string) error {
	f, err := os.Open(blob)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	magic, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	var r io.Reader = br
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	case bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	return applyLayer(root, r)
}

// Remove deletes an unpacked image (its blobs stay cached); used by tests
// and to recover from a corrupt root filesystem.
func (s *Store) Remove(digest v1.Hash) error {
	dir := s.rootfsDir(digest)
	if err := os.Remove(dir + ".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.RemoveAll(dir)
}
