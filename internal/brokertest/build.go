package brokertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/kairolog/kairolog/internal/heldport"
)

// BinaryEnv names a prebuilt broker binary to use instead of building one.
const BinaryEnv = "KAIROLOG_BROKER_BIN"

var build struct {
	once sync.Once
	path string
	err  error
}

// Build compiles cmd/broker once per test process into a temporary directory
// and returns the binary's path. With KAIROLOG_BROKER_BIN set it returns that
// path instead. The directory is left for the OS to clean, since several
// suites of one process share the binary.
func Build() (string, error) {
	build.once.Do(func() {
		if p := os.Getenv(BinaryEnv); p != "" {
			build.path = p
			return
		}
		dir, err := os.MkdirTemp("", "kairolog-broker-")
		if err != nil {
			build.err = err
			return
		}
		out := filepath.Join(dir, "broker")
		cmd := exec.Command("go", "build", "-o", out, "github.com/kairolog/kairolog/cmd/broker")
		if b, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("brokertest: go build cmd/broker: %v\n%s", err, b)
			return
		}
		build.path = out
	})
	return build.path, build.err
}

// takesSockets reports whether the broker binary at path serves on
// sockets passed to it (heldport.ListenFDsEnv): every binary built from
// this tree does, one measured against it (KAIRO_BENCH_BROKERS) or named
// by KAIROLOG_BROKER_BIN may predate it. The variable's name is compiled
// into a binary that reads it.
func takesSockets(path string) bool {
	if v, ok := takers.Load(path); ok {
		return v.(bool)
	}
	b, err := os.ReadFile(path)
	takes := err == nil && bytes.Contains(b, []byte(heldport.ListenFDsEnv))
	takers.Store(path, takes)
	return takes
}

// takers caches takesSockets by binary path.
var takers sync.Map
