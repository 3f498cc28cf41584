package brokertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
