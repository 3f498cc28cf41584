package nodeagent

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// The pod network is what a bridge CNI plugin sets up on a kubelet's node:
// each pod gets a network namespace of its own, with lo up and an eth0 that
// is one end of a veth pair whose other end is a port of the node's bridge.
// The bridge's address (the node's InternalIP) is the pods' default
// gateway, so pods reach each other across the bridge, and the node and its
// Service addresses through the gateway. Every container of a pod joins the
// pod's namespace; hostNetwork pods stay in the node's.
//
// The namespace is held by an open file in the node's process and never
// bind-mounted anywhere, so if the node dies the kernel frees it (and with
// it the veth pair) once the pod's processes are gone.

// podNetwork attaches pods to the node's bridge.
type podNetwork struct {
	bridge  string     // the node's bridge, created by whoever runs the node
	gateway net.IP     // the bridge's address
	mask    net.IPMask // of the pod range
	// services is the Service range and proxy the address of the service
	// proxy's namespace on the bridge; every pod routes the range there
	// directly, so that no packet has to be forwarded by the node. Both
	// are nil when the node has no service proxy namespace.
	services *net.IPNet
	proxy    net.IP
}

// maxIfName is the kernel's limit on interface names (IFNAMSIZ-1).
const maxIfName = 15

// newPodNetwork describes the pod network on bridge; services, when not
// nil, is the Service range, served from ServiceProxyIP(podCIDR).
func newPodNetwork(bridge string, gateway net.IP, podCIDR, services *net.IPNet) (*podNetwork, error) {
	if len(bridge)+4 > maxIfName {
		return nil, fmt.Errorf("bridge name %q is too long to name its ports after it", bridge)
	}
	if !podCIDR.Contains(gateway) {
		return nil, fmt.Errorf("gateway %s is outside the pod range %s", gateway, podCIDR)
	}
	n := &podNetwork{bridge: bridge, gateway: gateway, mask: podCIDR.Mask, services: services}
	if services != nil {
		n.proxy = ServiceProxyIP(podCIDR)
	}
	return n, nil
}

// ServiceProxyIP is the address of the service proxy's namespace: the last
// usable address of the pod range (10.244.N.254 of 10.244.N.0/24), which no
// pod gets. The machine routes the Service range there too.
func ServiceProxyIP(podCIDR *net.IPNet) net.IP {
	base := podCIDR.IP.To4()
	ones, bits := podCIDR.Mask.Size()
	last := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	last |= 1<<(bits-ones) - 1 // broadcast
	last--
	return net.IPv4(byte(last>>24), byte(last>>16), byte(last>>8), byte(last)).To4()
}

// hostIfName names the node's end of a pod's veth pair after the bridge and
// the pod address's last byte ("kairo-42-17"), so that everything of one
// node shares the bridge's name as a prefix and a crashed node's leftovers
// are easy to find.
func hostIfName(bridge string, ip net.IP) string {
	return bridge + "-" + strconv.Itoa(int(ip.To4()[3]))
}

// podNetNS is one pod's network namespace.
type podNetNS struct {
	ns     *os.File // the namespace, kept alive by this open file
	hostIf string   // the node's end of the veth pair
}

// attach creates a network namespace for a pod with address ip and wires it
// to the bridge. On error nothing is left behind.
func (n *podNetwork) attach(ip net.IP) (_ *podNetNS, err error) {
	ns, err := newNetNS()
	if err != nil {
		return nil, fmt.Errorf("create network namespace: %w", err)
	}
	p := &podNetNS{ns: ns, hostIf: hostIfName(n.bridge, ip)}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	bridge, err := netlink.LinkByName(n.bridge)
	if err != nil {
		return nil, fmt.Errorf("bridge %s: %w", n.bridge, err)
	}
	// A veth of the same name is a leftover of a pod whose namespace the
	// kernel has not freed yet (or of a crashed node): it is ours to remove.
	if old, err := netlink.LinkByName(p.hostIf); err == nil {
		_ = netlink.LinkDel(old)
	}
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: p.hostIf, MasterIndex: bridge.Attrs().Index, MTU: bridge.Attrs().MTU},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(int(ns.Fd())),
	}
	if err := netlink.LinkAdd(veth); err != nil {
		return nil, fmt.Errorf("create veth %s: %w", p.hostIf, err)
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return nil, fmt.Errorf("set %s up: %w", p.hostIf, err)
	}

	h, err := netlink.NewHandleAt(netns.NsHandle(int(ns.Fd())))
	if err != nil {
		return nil, err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return nil, err
	}
	if err := h.LinkSetUp(lo); err != nil {
		return nil, fmt.Errorf("set lo up: %w", err)
	}
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		return nil, err
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: n.mask}}); err != nil {
		return nil, fmt.Errorf("address %s on eth0: %w", ip, err)
	}
	if err := h.LinkSetUp(eth0); err != nil {
		return nil, fmt.Errorf("set eth0 up: %w", err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: n.gateway}); err != nil {
		return nil, fmt.Errorf("default route via %s: %w", n.gateway, err)
	}
	if n.services != nil && !ip.Equal(n.proxy) {
		if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Dst: n.services, Gw: n.proxy}); err != nil {
			return nil, fmt.Errorf("route %s via %s: %w", n.services, n.proxy, err)
		}
	}
	return p, nil
}

// attachServiceProxy creates the service proxy's network namespace: a pod
// namespace at the proxy address whose lo holds the whole Service range
// (`ip route add local <range> dev lo`), so the proxy can listen on any
// ClusterIP there without a socket on the machine, where an unrelated
// process may hold the same port on all addresses.
func (n *podNetwork) attachServiceProxy() (*podNetNS, error) {
	if n.services == nil {
		return nil, errors.New("the node has no Service range")
	}
	ns, err := n.attach(n.proxy)
	if err != nil {
		return nil, fmt.Errorf("service proxy namespace: %w", err)
	}
	h, err := netlink.NewHandleAt(netns.NsHandle(int(ns.ns.Fd())))
	if err != nil {
		ns.close()
		return nil, err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		ns.close()
		return nil, err
	}
	local := &netlink.Route{Dst: n.services, LinkIndex: lo.Attrs().Index, Table: unix.RT_TABLE_LOCAL,
		Type: unix.RTN_LOCAL, Scope: netlink.SCOPE_HOST, Protocol: unix.RTPROT_BOOT}
	if err := h.RouteAdd(local); err != nil {
		ns.close()
		return nil, fmt.Errorf("service proxy namespace: local route %s: %w", n.services, err)
	}
	return ns, nil
}

// file is the namespace, for a container process to join (nil for a
// hostNetwork pod).
func (p *podNetNS) file() *os.File {
	if p == nil {
		return nil
	}
	return p.ns
}

// close removes the veth pair and lets the namespace go. Call it once the
// pod's processes are gone.
func (p *podNetNS) close() {
	if p == nil {
		return
	}
	if l, err := netlink.LinkByName(p.hostIf); err == nil {
		_ = netlink.LinkDel(l)
	}
	if p.ns != nil {
		_ = p.ns.Close()
	}
}

// do runs fn on an OS thread that is inside the pod's network namespace,
// as containerd does for port-forwarding: sockets fn opens belong to the
// pod's network stack and stay there after fn returns. fn must not start
// goroutines that open sockets. A nil podNetNS (hostNetwork) runs fn as is.
func (p *podNetNS) do(fn func() error) error {
	if p == nil {
		return fn()
	}
	runtime.LockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if err := unix.Setns(int(p.ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter the pod's network namespace: %w", err)
	}
	fnErr := fn()
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, so the runtime discards it with this
		// goroutine instead of reusing it in the wrong namespace.
		return errors.Join(fnErr, fmt.Errorf("leave the pod's network namespace: %w", err))
	}
	runtime.UnlockOSThread()
	return fnErr
}

// newNetNS creates a network namespace and returns it as an open file,
// without moving the calling goroutine: the unshare happens on a thread of
// its own that goes back to the node's namespace afterwards (or, if it
// cannot, is discarded).
func newNetNS() (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			res <- result{err: err}
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			res <- result{err: err}
			return
		}
		f, err := os.Open("/proc/thread-self/ns/net")
		if restoreErr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); restoreErr != nil {
			// Leave the thread locked: it ends with this goroutine.
			if f != nil {
				_ = f.Close()
			}
			res <- result{err: fmt.Errorf("return to the node's network namespace: %w", restoreErr)}
			return
		}
		runtime.UnlockOSThread()
		res <- result{f: f, err: err}
	}()
	r := <-res
	return r.f, r.err
}
