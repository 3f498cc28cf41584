package imagestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ErrNotFound means the registry has no such repository, tag or digest.
var ErrNotFound = errors.New("not found")

// ErrNotPresent means an image is not on this node and may not be pulled
// (imagePullPolicy: Never).
var ErrNotPresent = errors.New("image is not present on the node")

// Config configures a Store.
type Config struct {
	// Dir holds the blobs, the unpacked root filesystems and the reference
	// index; created if missing.
	Dir string
	// Mirrors maps a registry host as image references name it
	// ("docker.io") to the host:port that serves it ("127.0.0.1:5000"), as
	// containerd's registry mirrors; loopback mirrors are plain HTTP.
	// References to other registries go to the registry itself.
	Mirrors map[string]string
	// Transport carries registry requests; http.DefaultTransport when nil.
	Transport http.RoundTripper
}

// Image is a pulled image as a runtime uses it.
type Image struct {
	// Ref is the normalised reference the image was asked for
	// ("docker.io/kairolog/broker:dev").
	Ref string
	// ID is the image ID a kubelet reports: the repository at the manifest
	// digest ("docker.io/kairolog/broker@sha256:…").
	ID string
	// Digest is the manifest digest.
	Digest v1.Hash
	// Config is the image's configuration (entrypoint, env, user …).
	Config v1.Config
	// RootFS is the unpacked root filesystem; it must not be written to.
	RootFS string
	// Size is the sum of the compressed layers.
	Size int64
}

// PullResult says what a pull did.
type PullResult struct {
	*Image
	// Fetched is how many bytes of layers came from the registry (0 when
	// every layer was cached).
	Fetched int64
	// Took is how long the pull took, including resolving the reference.
	Took time.Duration
}

// Store is a node's image store. Its methods are safe for concurrent use;
// pulls of one image share one download and one unpack.
type Store struct {
	cfg Config

	mu    sync.Mutex
	refs  map[string]string      // normalised reference → manifest digest
	locks map[string]*sync.Mutex // manifest digest or blob digest → its lock
}

// Open opens (or creates) the store in cfg.Dir.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("imagestore: Config.Dir is required")
	}
	for _, d := range []string{"blobs/sha256", "rootfs"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	s := &Store{cfg: cfg, refs: map[string]string{}, locks: map[string]*sync.Mutex{}}
	if data, err := os.ReadFile(s.refsPath()); err == nil {
		if err := json.Unmarshal(data, &s.refs); err != nil {
			return nil, fmt.Errorf("imagestore: %s: %w", s.refsPath(), err)
		}
	}
	return s, nil
}

func (s *Store) refsPath() string { return filepath.Join(s.cfg.Dir, "refs.json") }

// Normalize returns the full form of an image reference
// ("kairolog/broker" → "docker.io/kairolog/broker:latest").
func Normalize(ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	return fullName(r), nil
}

// fullName spells a reference the way containerd and the kubelet report
// it: Docker Hub as docker.io, never index.docker.io.
func fullName(r name.Reference) string {
	repo := repositoryName(r.Context())
	switch v := r.(type) {
	case name.Digest:
		return repo + "@" + v.DigestStr()
	case name.Tag:
		return repo + ":" + v.TagStr()
	}
	return r.Name()
}

func repositoryName(repo name.Repository) string {
	reg := repo.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + repo.RepositoryStr()
}

// Present returns the image a reference last resolved to, if it is
// unpacked on this node.
func (s *Store) Present(ref string) (*Image, bool) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, false
	}
	digest := ""
	if d, ok := r.(name.Digest); ok {
		digest = d.DigestStr()
	} else {
		s.mu.Lock()
		digest = s.refs[fullName(r)]
		s.mu.Unlock()
	}
	if digest == "" {
		return nil, false
	}
	h, err := v1.NewHash(digest)
	if err != nil {
		return nil, false
	}
	img, err := s.load(r, h)
	if err != nil {
		return nil, false
	}
	return img, true
}

// Pull resolves ref against its registry (or mirror), fetches the layers
// the store lacks and unpacks the image if it is not unpacked yet.
func (s *Store) Pull(ctx context.Context, ref string) (*PullResult, error) {
	began := time.Now()
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	full := fullName(r)
	remoteRef, err := s.endpoint(r)
	if err != nil {
		return nil, err
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH})}
	if s.cfg.Transport != nil {
		opts = append(opts, remote.WithTransport(s.cfg.Transport))
	}
	img, err := remote.Image(remoteRef, opts...)
	if err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("failed to resolve reference %q: %s: %w", full, full, ErrNotFound)
		}
		return nil, fmt.Errorf("failed to resolve reference %q: %w", full, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	fetched, err := s.unpack(ctx, digest, img)
	if err != nil {
		return nil, fmt.Errorf("failed to pull and unpack image %q: %w", full, err)
	}
	s.mu.Lock()
	s.refs[full] = digest.String()
	data, _ := json.Marshal(s.refs)
	s.mu.Unlock()
	if err := writeFileAtomic(s.refsPath(), data); err != nil {
		return nil, err
	}
	out, err := s.load(r, digest)
	if err != nil {
		return nil, err
	}
	return &PullResult{Image: out, Fetched: fetched, Took: time.Since(began)}, nil
}

// endpoint is ref rewritten to the mirror of its registry, if it has one.
func (s *Store) endpoint(r name.Reference) (name.Reference, error) {
	reg := r.Context().RegistryStr()
	mirror, ok := s.cfg.Mirrors[reg]
	if !ok && reg == name.DefaultRegistry {
		mirror, ok = s.cfg.Mirrors["docker.io"]
	}
	if !ok {
		return r, nil
	}
	repo := mirror + "/" + r.Context().RepositoryStr()
	if d, isDigest := r.(name.Digest); isDigest {
		return name.NewDigest(repo+"@"+d.DigestStr(), name.Insecure)
	}
	return name.NewTag(repo+":"+r.Identifier(), name.Insecure)
}

func isNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// lock returns the lock of one digest.
func (s *Store) lock(key string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[key]
	if !ok {
		l = &sync.Mutex{}
		s.locks[key] = l
	}
	return l
}

// load describes an unpacked image.
func (s *Store) load(r name.Reference, digest v1.Hash) (*Image, error) {
	dir := s.rootfsDir(digest)
	data, err := os.ReadFile(dir + ".json")
	if err != nil {
		return nil, err
	}
	var meta unpackedImage
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, err
	}
	return &Image{
		Ref:    fullName(r),
		ID:     repositoryName(r.Context()) + "@" + digest.String(),
		Digest: digest,
		Config: meta.Config,
		RootFS: dir,
		Size:   meta.Size,
	}, nil
}

func (s *Store) rootfsDir(digest v1.Hash) string {
	return filepath.Join(s.cfg.Dir, "rootfs", digest.Hex)
}

func (s *Store) blobPath(h v1.Hash) string {
	return filepath.Join(s.cfg.Dir, "blobs", h.Algorithm, h.Hex)
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
