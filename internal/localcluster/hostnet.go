package localcluster

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/kairolog/kairolog/internal/nodeagent"
)

// hostNetwork is the machine's side of a cluster's network: the bridge
// kairo-N holding the node address 10.244.N.1 (pods' default gateway, and
// where the control plane and the kubelet API listen), and a route of the
// Service range 10.96.N.0/24 to the service proxy's own network namespace
// on the bridge (10.244.N.254), so that `curl <ClusterIP>` works from the
// machine as from a pod. No ClusterIP is an address of the machine, so a
// Service port never collides with anything listening here. Nothing is
// forwarded between interfaces and no firewall rule is added: the
// machine's ip_forward and bridge netfilter settings stay as they are.
//
// Each pod's veth pair (kairo-N-<last byte of its address>), the proxy's
// among them, is the node agent's; tearing down removes any left over too.
type hostNetwork struct {
	bridge      string
	nodeIP      net.IP
	podCIDR     *net.IPNet
	serviceCIDR *net.IPNet
	proxyIP     net.IP
}

func slotNetwork(s *slot) *hostNetwork {
	return &hostNetwork{bridge: s.bridgeName(), nodeIP: s.nodeIP(), podCIDR: s.podCIDR(), serviceCIDR: s.serviceCIDR(),
		proxyIP: nodeagent.ServiceProxyIP(s.podCIDR())}
}

// ErrAddressesTaken means a slot's address ranges are already used on this
// machine by something other than a local cluster.
var ErrAddressesTaken = errors.New("address range already in use on this machine")

// checkFree reports ErrAddressesTaken if an interface other than this
// network's holds an address in its ranges, or a route other than its own
// leads into them (a real cluster's pod network, a VPN…).
func (h *hostNetwork) checkFree() error {
	overlaps := func(n *net.IPNet) bool {
		return n != nil && (n.Contains(h.podCIDR.IP) || h.podCIDR.Contains(n.IP) ||
			n.Contains(h.serviceCIDR.IP) || h.serviceCIDR.Contains(n.IP))
	}
	links, err := netlink.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return err
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return err
	}
	for _, a := range addrs {
		if overlaps(a.IPNet) && !h.owns(names[a.LinkIndex]) {
			return fmt.Errorf("%w: %s on %s", ErrAddressesTaken, a.IPNet, names[a.LinkIndex])
		}
	}
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return err
	}
	for _, r := range routes {
		if r.Dst == nil || r.Dst.IP.IsLoopback() || isDefault(r.Dst) || !overlaps(r.Dst) {
			continue
		}
		if h.owns(names[r.LinkIndex]) || (r.Type == unix.RTN_LOCAL && r.Dst.String() == h.serviceCIDR.String()) {
			continue // our own (or an older version's), left by a crashed run: teardown removes it
		}
		return fmt.Errorf("%w: route to %s via %s", ErrAddressesTaken, r.Dst, names[r.LinkIndex])
	}
	return nil
}

func isDefault(n *net.IPNet) bool { ones, _ := n.Mask.Size(); return ones == 0 }

// owns reports whether a link is this network's bridge or one of its veths.
func (h *hostNetwork) owns(link string) bool {
	return link == h.bridge || strings.HasPrefix(link, h.bridge+"-")
}

// setup removes what a crashed run on the same slot left behind, then
// creates the bridge with the node address and routes the Service range to
// the service proxy's address on it.
func (h *hostNetwork) setup() error {
	h.teardown()
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: h.bridge}}
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("create bridge %s: %w", h.bridge, err)
	}
	link, err := netlink.LinkByName(h.bridge)
	if err != nil {
		return err
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: h.nodeIP, Mask: h.podCIDR.Mask}}
	if err := netlink.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("address %s on %s: %w", addr.IPNet, h.bridge, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", h.bridge, err)
	}
	route := &netlink.Route{Dst: h.serviceCIDR, Gw: h.proxyIP, LinkIndex: link.Attrs().Index}
	if err := netlink.RouteReplace(route); err != nil {
		return fmt.Errorf("route %s via %s: %w", h.serviceCIDR, h.proxyIP, err)
	}
	return nil
}

// oldServiceRoute is `ip route add local <serviceCIDR> dev lo`, how earlier
// versions served the Service range; teardown removes one a crashed run of
// them left.
func (h *hostNetwork) oldServiceRoute(lo int) *netlink.Route {
	return &netlink.Route{
		Dst: h.serviceCIDR, LinkIndex: lo, Table: unix.RT_TABLE_LOCAL,
		Type: unix.RTN_LOCAL, Scope: netlink.SCOPE_HOST, Protocol: unix.RTPROT_BOOT,
	}
}

// teardown removes the bridge (and with it the Service route through it)
// and any veth named after it; what is already gone is skipped. Pod
// namespaces need no cleaning: nothing pins them once their processes and
// the node are gone.
func (h *hostNetwork) teardown() {
	if links, err := netlink.LinkList(); err == nil || errors.Is(err, netlink.ErrDumpInterrupted) {
		for _, l := range links {
			if h.owns(l.Attrs().Name) && l.Attrs().Name != h.bridge {
				_ = netlink.LinkDel(l)
			}
		}
	}
	if l, err := netlink.LinkByName(h.bridge); err == nil {
		_ = netlink.LinkDel(l)
	}
	if lo, err := netlink.LinkByName("lo"); err == nil {
		_ = netlink.RouteDel(h.oldServiceRoute(lo.Attrs().Index))
	}
}

// sweepStaleNetworks removes the networks of clusters that died without
// stopping (SIGKILL, a machine crash) on any slot no running cluster
// holds, so they do not linger until their slot is drawn again.
func sweepStaleNetworks(lockDir string, own int) {
	links, err := netlink.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return
	}
	for _, l := range links {
		rest, ok := strings.CutPrefix(l.Attrs().Name, "kairo-")
		if !ok || l.Type() != "bridge" {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n == own || n < firstSlot || n > lastSlot {
			continue
		}
		if s, ok := tryLockSlot(lockDir, n); ok {
			slotNetwork(s).teardown()
			s.release()
		}
	}
}
