package imagestore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// testRegistry is go-containerregistry's registry with blobs on disk,
// counting the layer blobs it serves.
type testRegistry struct {
	host      string
	blobGets  atomic.Int64
	unhealthy atomic.Bool
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	h := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(t.TempDir())), registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.unhealthy.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.blobGets.Add(1)
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// push builds an image of the given layers and config and pushes it to
// repo:tag on the registry.
func (r *testRegistry) push(t *testing.T, repoTag string, cfg v1.Config, layers ...[]byte) v1.Hash {
	t.Helper()
	img := empty.Image
	for _, l := range layers {
		data := l
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, layer); err != nil {
			t.Fatal(err)
		}
	}
	img, err := mutate.Config(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(r.host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return d
}

func openStore(t *testing.T, reg *testRegistry) *Store {
	t.Helper()
	s, err := Open(Config{Dir: filepath.Join(t.TempDir(), "images"), Mirrors: map[string]string{"docker.io": reg.host}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPullThroughMirror(t *testing.T) {
	ctx := context.Background()
	reg := newTestRegistry(t)
	base := layer(t, dir("etc"), file("etc/passwd", "root:x:0:0::/:"))
	v1Layer := layer(t, dir("app"), file("app/version", "1"))
	cfg := v1.Config{Entrypoint: []string{"/app/run"}, User: "65532", Env: []string{"A=1"}, WorkingDir: "/app"}
	digest1 := reg.push(t, "kairolog/broker:dev", cfg, base, v1Layer)

	s := openStore(t, reg)
	if _, ok := s.Present("kairolog/broker:dev"); ok {
		t.Fatal("present before any pull")
	}
	res, err := s.Pull(ctx, "kairolog/broker:dev")
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "docker.io/kairolog/broker@"+digest1.String() || res.Ref != "docker.io/kairolog/broker:dev" {
		t.Errorf("ID %q Ref %q", res.ID, res.Ref)
	}
	if res.Config.WorkingDir != "/app" || res.Config.User != "65532" || res.Fetched == 0 {
		t.Errorf("config %+v, fetched %d", res.Config, res.Fetched)
	}
	if got := tree(t, res.RootFS); got != "app/\napp/version = 1\netc/\netc/passwd = root:x:0:0::/:" {
		t.Errorf("root filesystem:\n%s", got)
	}

	// Pulled again: nothing downloaded; present without the registry.
	gets := reg.blobGets.Load()
	again, err := s.Pull(ctx, "docker.io/kairolog/broker:dev")
	if err != nil || again.Fetched != 0 || again.Digest != digest1 {
		t.Fatalf("second pull: %+v, %v", again, err)
	}
	if n := reg.blobGets.Load() - gets; n != 0 {
		t.Errorf("second pull fetched %d blobs", n)
	}
	reg.unhealthy.Store(true)
	if img, ok := s.Present("kairolog/broker:dev"); !ok || img.Digest != digest1 {
		t.Errorf("Present with the registry down = %v, %v", img, ok)
	}
	if _, err := s.Pull(ctx, "kairolog/broker:dev"); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "503") {
		t.Errorf("pull with the registry down: %v, want the registry's 503", err)
	}
	reg.unhealthy.Store(false)

	// The tag moves: the new image shares the base layer, so only the new
	// layer is fetched, and the old image stays unpacked.
	digest2 := reg.push(t, "kairolog/broker:dev", cfg, base, layer(t, dir("app"), file("app/version", "2")))
	gets = reg.blobGets.Load()
	moved, err := s.Pull(ctx, "kairolog/broker:dev")
	if err != nil || moved.Digest != digest2 || moved.Digest == digest1 {
		t.Fatalf("pull after the tag moved: %+v, %v", moved, err)
	}
	if n := reg.blobGets.Load() - gets; n != 2 { // config and the new layer
		t.Errorf("pull of the moved tag fetched %d blobs, want 2 (config and the changed layer)", n)
	}
	if b, _ := os.ReadFile(filepath.Join(moved.RootFS, "app/version")); string(b) != "2" {
		t.Errorf("app/version = %q", b)
	}
	if _, err := os.Stat(filepath.Join(s.rootfsDir(digest1), "app/version")); err != nil {
		t.Errorf("the first image's root filesystem: %v", err)
	}
	// By digest.
	byDigest, err := s.Pull(ctx, "kairolog/broker@"+digest1.String())
	if err != nil || byDigest.Digest != digest1 {
		t.Errorf("pull by digest: %+v, %v", byDigest, err)
	}

	// A reopened store knows the references it resolved.
	s2, err := Open(Config{Dir: s.cfg.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if img, ok := s2.Present("kairolog/broker:dev"); !ok || img.Digest != digest2 {
		t.Errorf("reopened store: %v, %v", img, ok)
	}
}

func TestPullNotFound(t *testing.T) {
	reg := newTestRegistry(t)
	reg.push(t, "kairolog/broker:dev", v1.Config{}, layer(t, file("f", "x")))
	s := openStore(t, reg)
	for _, ref := range []string{"kairolog/broker:no-such-tag", "kairolog/nothing:dev", "nginx:1.27",
		"kairolog/broker@sha256:0000000000000000000000000000000000000000000000000000000000000000"} {
		_, err := s.Pull(context.Background(), ref)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("Pull(%q) = %v, want ErrNotFound", ref, err)
			continue
		}
		full, _ := Normalize(ref)
		if !strings.Contains(err.Error(), `failed to resolve reference "`+full+`"`) {
			t.Errorf("Pull(%q) error %q does not name %s", ref, err, full)
		}
	}
	if _, err := s.Pull(context.Background(), "Not A Reference"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("invalid reference: %v", err)
	}
}

// TestPullRefusesAnUnsafeImage: an image with an escaping layer is not
// unpacked, and nothing is left that a later pull would take for it.
func TestPullRefusesAnUnsafeImage(t *testing.T) {
	reg := newTestRegistry(t)
	reg.push(t, "evil/image:1", v1.Config{}, layer(t, symlink("etc", "/etc")))
	s := openStore(t, reg)
	_, err := s.Pull(context.Background(), "evil/image:1")
	if !errors.Is(err, ErrUnsafeLayer) || !strings.Contains(err.Error(), `failed to pull and unpack image "docker.io/evil/image:1"`) {
		t.Fatalf("err = %v", err)
	}
	if _, ok := s.Present("evil/image:1"); ok {
		t.Error("the refused image is present")
	}
	entries, _ := os.ReadDir(filepath.Join(s.cfg.Dir, "rootfs"))
	if len(entries) != 0 {
		t.Errorf("left in rootfs/: %v", entries)
	}
}
