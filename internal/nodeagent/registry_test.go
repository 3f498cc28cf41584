package nodeagent

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kairolog/kairolog/internal/imagebuild"
)

// testRegistry is go-containerregistry's registry, blobs on disk, that
// can be taken down to see what pulls do then.
type testRegistry struct {
	host string
	srv  *httptest.Server
	dir  string
	down atomic.Bool
}

func startTestRegistry() (*testRegistry, error) {
	dir, err := os.MkdirTemp("", "nodeagent-registry-")
	if err != nil {
		return nil, err
	}
	r := &testRegistry{dir: dir}
	h := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.down.Load() {
			http.Error(w, "registry down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, req)
	}))
	r.host = strings.TrimPrefix(r.srv.URL, "http://")
	return r, nil
}

func (r *testRegistry) close() {
	r.srv.Close()
	_ = os.RemoveAll(r.dir)
}

// push puts img at <host>/<repoTag>, so pods reach it as docker.io/<repoTag>.
func (r *testRegistry) push(t testing.TB, repoTag string, img v1.Image) v1.Hash {
	t.Helper()
	ref, err := name.NewTag(r.host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fixtureImage is the fixture as an image built like the product's: the
// base layer (non-root user 65532, CA bundle), the fixture at
// /usr/local/bin/fixture, the broker image's data directory, WORKDIR and
// VOLUME.
var fixtureImage = sync.OnceValues(func() (v1.Image, error) {
	bin, err := fixtureBinary()
	if err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp("", "nodeagent-image-")
	if err != nil {
		return nil, err
	}
	b, err := imagebuild.NewBuilder(imagebuild.Options{Scratch: scratch})
	if err != nil {
		return nil, err
	}
	spec := imagebuild.BrokerSpec("")
	spec.Name = "fixture"
	spec.Entries = []imagebuild.Entry{
		{Path: "/usr/local/bin/fixture", Source: bin, Mode: 0o755},
		{Path: imagebuild.BrokerDataDir, Mode: 0o755, UID: imagebuild.NonRootID, GID: imagebuild.NonRootID},
	}
	spec.Entrypoint = []string{"/usr/local/bin/fixture"}
	return b.Build(spec)
})

// fixtureRegistry is the registry every pod test pulls kairolog/broker:test
// from, unless a test brings its own.
var fixtureRegistry = sync.OnceValues(func() (*testRegistry, error) {
	img, err := fixtureImage()
	if err != nil {
		return nil, err
	}
	r, err := startTestRegistry()
	if err != nil {
		return nil, err
	}
	ref, err := name.NewTag(r.host+"/kairolog/broker:test", name.Insecure)
	if err != nil {
		return nil, err
	}
	return r, remote.Write(ref, img)
})
