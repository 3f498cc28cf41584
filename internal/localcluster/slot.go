package localcluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Slots number the clusters that run at the same time on one machine; slot N
// owns the pod range 10.244.N.0/24 (bridge kairo-N, node address 10.244.N.1)
// and the Service range 10.96.N.0/24.
const (
	firstSlot = 10
	lastSlot  = 250
)

// ErrNoSlot means every slot is held by another running cluster.
var ErrNoSlot = errors.New("localcluster: every address slot is in use")

// slot is this cluster's share of the machine's addresses. It is held through
// an exclusive flock that the kernel releases when the process dies, so a
// crashed cluster never leaks its slot.
type slot struct {
	n    int
	lock *os.File
}

// acquireSlot takes a free slot, trying them in random order so that clusters
// started at the same moment rarely contend for the same lock.
func acquireSlot(lockDir string) (*slot, error) {
	if err := os.MkdirAll(lockDir, 0o755); err != nil {
		return nil, err
	}
	order := rand.Perm(lastSlot - firstSlot + 1)
	for _, i := range order {
		n := firstSlot + i
		f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(n)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			return nil, fmt.Errorf("lock slot %d: %w", n, err)
		}
		return &slot{n: n, lock: f}, nil
	}
	return nil, ErrNoSlot
}

// tryLockSlot takes slot n if no running cluster holds it.
func tryLockSlot(lockDir string, n int) (*slot, bool) {
	f, err := os.OpenFile(filepath.Join(lockDir, strconv.Itoa(n)+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	return &slot{n: n, lock: f}, true
}

// release gives the slot back.
func (s *slot) release() {
	if s.lock != nil {
		_ = s.lock.Close()
		s.lock = nil
	}
}

// nodeIP is the node's address (its InternalIP): the address of its bridge,
// the pods' default gateway, and where the control plane listens.
func (s *slot) nodeIP() net.IP { return net.IPv4(10, 244, byte(s.n), 1).To4() }

// podCIDR holds the pod addresses; .1 is the node's own.
func (s *slot) podCIDR() *net.IPNet {
	return &net.IPNet{IP: net.IPv4(10, 244, byte(s.n), 0).To4(), Mask: net.CIDRMask(24, 32)}
}

// serviceCIDR is handed to kube-apiserver as --service-cluster-ip-range and
// routed to the service proxy's network namespace on the bridge.
func (s *slot) serviceCIDR() *net.IPNet {
	return &net.IPNet{IP: net.IPv4(10, 96, byte(s.n), 0).To4(), Mask: net.CIDRMask(24, 32)}
}

// kubernetesServiceIP is the first address of the service range, which
// kube-apiserver gives to the default/kubernetes Service.
func (s *slot) kubernetesServiceIP() net.IP { return net.IPv4(10, 96, byte(s.n), 1).To4() }

// bridgeName is the node's bridge; the node's ends of the pods' veth pairs
// are named after it ("kairo-42-17").
func (s *slot) bridgeName() string { return bridgeName(s.n) }

func bridgeName(n int) string { return "kairo-" + strconv.Itoa(n) }
