package nodeagent

import (
	"errors"
	"net"
	"sync"
)

// ErrNoPodIP means every address of the pod range is in use.
var ErrNoPodIP = errors.New("no free pod address")

// ipPool hands out pod addresses from a /24-or-smaller IPv4 range, skipping
// the network and broadcast addresses and the node's own. Like the
// host-local IPAM plugin it continues after the last address it gave out
// instead of reusing the lowest free one, so a peer that still caches a
// deleted pod's address does not reach the pod that replaced it.
type ipPool struct {
	mu   sync.Mutex
	base [4]byte
	size int
	skip map[int]bool
	used map[int]string // offset → owner
	last int
}

func newIPPool(cidr *net.IPNet, reserved ...net.IP) *ipPool {
	ones, bits := cidr.Mask.Size()
	p := &ipPool{size: 1 << (bits - ones), skip: map[int]bool{}, used: map[int]string{}}
	copy(p.base[:], cidr.IP.To4())
	p.skip[0] = true
	p.skip[p.size-1] = true
	for _, r := range reserved {
		if off, ok := p.offset(r); ok {
			p.skip[off] = true
		}
	}
	return p
}

func (p *ipPool) offset(ip net.IP) (int, bool) {
	v4 := ip.To4()
	if v4 == nil {
		return 0, false
	}
	off := 0
	for i := 0; i < 4; i++ {
		off = off<<8 | int(v4[i]^p.base[i])
	}
	return off, off >= 0 && off < p.size
}

func (p *ipPool) ip(off int) net.IP {
	ip := net.IPv4(p.base[0], p.base[1], p.base[2], p.base[3]).To4()
	for i := 3; i >= 0 && off > 0; i-- {
		ip[i] |= byte(off)
		off >>= 8
	}
	return ip
}

// allocate gives owner an address; the same owner always gets its own back.
func (p *ipPool) allocate(owner string) (net.IP, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for off, o := range p.used {
		if o == owner {
			return p.ip(off), nil
		}
	}
	for i := 1; i <= p.size; i++ {
		off := (p.last + i) % p.size
		if p.skip[off] || p.used[off] != "" {
			continue
		}
		p.used[off] = owner
		p.last = off
		return p.ip(off), nil
	}
	return nil, ErrNoPodIP
}

// release frees owner's address.
func (p *ipPool) release(owner string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for off, o := range p.used {
		if o == owner {
			delete(p.used, off)
		}
	}
}
