// The broker's packages are layers: front doors over the core, the core
// over coordinators, replicas, groups and the cluster, those over storage,
// with a few leaves (the core's vocabulary, the memory budget, the kept
// buffers, the topic config table, TLS, users and ACLs) that any layer may
// use. This test
// keeps the arrows pointing down.
package broker_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/kairolog/kairolog/"

// layers places every package of broker/: a package may depend only on
// packages of its own layer or below. A new package must be placed here.
var layers = map[string]int{
	// Leaves: the core's requests, results and codes; the memory budget;
	// the kept buffers; the topic config table; the TLS of the transports;
	// users and ACLs (auth); storage, which knows nothing above it.
	"broker/api":         0,
	"broker/buffers":     0,
	"broker/tlsconf":     0,
	"broker/auth":        0,
	"broker/memory":      0,
	"broker/topicconfig": 0,
	"broker/storage":     0,
	// The one transport between brokers.
	"broker/peer":         1,
	"broker/peer/binwire": 1,
	// Replicas, groups and the cluster's metadata quorum.
	"broker/cluster/metadata": 2,
	"broker/cluster":          2,
	"broker/replica":          2,
	"broker/group":            2,
	// The group coordinators this broker runs, over replicas and groups.
	"broker/coordinators": 3,
	// The core and its configuration.
	"broker/config": 4,
	"broker/core":   4,
	// Front doors: they translate a wire format to the core's requests.
	"broker/httpapi": 5,
	"broker/kafka":   5,
	// The HTTP client: nothing in the broker uses it.
	"broker/client": 6,
}

// outside are packages no part of the broker may depend on, whatever its
// layer: a front door or the client reaching into the core's layers
// would be a core that speaks a wire format.
var outside = []string{"broker/client"}

// frontDoors are the packages only cmd/ and the tests may wire together:
// no layer below them depends on any of them.
var frontDoors = []string{"broker/httpapi", "broker/kafka"}

func TestLayersPointDown(t *testing.T) {
	statSources(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if pkg == "broker" {
			continue // this test
		}
		seen[pkg] = true
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("%s is not placed in a layer: add it to layers", pkg)
			continue
		}
		var up []string
		for _, dep := range fields[1:] {
			dep, ok := strings.CutPrefix(dep, module)
			if !ok || !strings.HasPrefix(dep, "broker/") {
				continue
			}
			if dl, ok := layers[dep]; !ok || dl > layer {
				up = append(up, dep)
			}
			if pkg != dep && contains(outside, dep) && !contains(outside, pkg) {
				t.Errorf("%s depends on %s", pkg, dep)
			}
			if layer < layers["broker/httpapi"] && contains(frontDoors, dep) {
				t.Errorf("%s, below the front doors, depends on the front door %s", pkg, dep)
			}
		}
		if len(up) > 0 {
			sort.Strings(up)
			t.Errorf("%s (layer %d) depends on packages above it: %v", pkg, layer, up)
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("layers names %s, which go list did not find", pkg)
		}
	}
}

func contains(xs []string, x string) bool {
	return slices.Contains(xs, x)
}

// statSources stats go.mod and every Go file of the module. go test
// caches a passing result keyed on what the test process itself read, and
// it cannot see what the go list it runs reads: without these stats an
// import added to a package would leave the cached "ok" standing.
func statSources(t *testing.T) {
	t.Helper()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (d.Name() == "bin" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod"):
			_, err := os.Stat(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("stat the module's sources: %v", err)
	}
}
