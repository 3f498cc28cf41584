package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// stateMarker marks a directory as a local cluster's state directory. It is
// also the lock one running cluster holds on its directory.
const stateMarker = ".kairo-local-state"

// ErrStateDirInUse means another running cluster holds the state directory.
var ErrStateDirInUse = errors.New("localcluster: state directory is in use by another running cluster")

// claimStateDir locks dir for this cluster and empties it, so that every
// start is a fresh cluster. A non-empty directory that is not a previous
// cluster's state is refused rather than wiped.
func claimStateDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	marked := false
	for _, e := range entries {
		if e.Name() == stateMarker {
			marked = true
		}
	}
	if len(entries) > 0 && !marked {
		return nil, fmt.Errorf("localcluster: %s is not empty and is not a local cluster's state directory; refusing to wipe it", dir)
	}
	lock, err := os.OpenFile(filepath.Join(dir, stateMarker), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrStateDirInUse, dir)
		}
		return nil, err
	}
	for _, e := range entries {
		if e.Name() == stateMarker {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			_ = lock.Close()
			return nil, fmt.Errorf("clean %s: %w", dir, err)
		}
	}
	return lock, nil
}
