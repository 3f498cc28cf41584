package nodeagent

import (
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// testBridge creates a bridge of its own for one test, on a range no
// cluster uses (10.245.x.0/24, with the Service range 10.97.x.0/24), and
// removes it afterwards.
func testBridge(t *testing.T) *podNetwork {
	t.Helper()
	requireRoot(t)
	for range 20 {
		x := 10 + rand.IntN(240)
		name := "ktest-" + strconv.Itoa(x)
		cidr := &net.IPNet{IP: net.IPv4(10, 245, byte(x), 0).To4(), Mask: net.CIDRMask(24, 32)}
		gw := net.IPv4(10, 245, byte(x), 1).To4()
		if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
			continue // another test process has this one
		}
		t.Cleanup(func() {
			if l, err := netlink.LinkByName(name); err == nil {
				_ = netlink.LinkDel(l)
			}
		})
		br, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: &net.IPNet{IP: gw, Mask: cidr.Mask}}); err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetUp(br); err != nil {
			t.Fatal(err)
		}
		services := &net.IPNet{IP: net.IPv4(10, 97, byte(x), 0).To4(), Mask: net.CIDRMask(24, 32)}
		n, err := newPodNetwork(name, gw, cidr, services)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Fatal("no free test bridge")
	return nil
}

// serveIn answers "name" on addr inside the pod's namespace.
func serveIn(t *testing.T, ns *podNetNS, addr, name string) {
	t.Helper()
	var l net.Listener
	if err := ns.do(func() (err error) { l, err = net.Listen("tcp", addr); return err }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, name)
			_ = c.Close()
		}
	}()
}

func readConn(c net.Conn, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(c)
	return string(b), err
}

// TestPodNetwork checks what pods rely on: two pods bind the same port on
// all interfaces, the node reaches each at its address, a pod reaches the
// other and the node through the bridge, port-forward's dial reaches
// localhost inside the pod (and so misses a process bound to the pod IP
// only), and closing removes the veth pair.
func TestPodNetwork(t *testing.T) {
	n := testBridge(t)
	base := n.gateway.To4()
	ipA := net.IPv4(base[0], base[1], base[2], 10).To4()
	ipB := net.IPv4(base[0], base[1], base[2], 11).To4()
	a, err := n.attach(ipA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := n.attach(ipB)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()

	serveIn(t, a, ":8080", "a")
	serveIn(t, b, ":8080", "b")
	serveIn(t, b, net.JoinHostPort(ipB.String(), "9093"), "b-pod-ip-only")

	for ip, want := range map[string]string{ipA.String(): "a", ipB.String(): "b"} {
		if got, err := readConn(net.DialTimeout("tcp", net.JoinHostPort(ip, "8080"), 2*time.Second)); err != nil || got != want {
			t.Errorf("node → %s:8080 = %q, %v; want %q", ip, got, err, want)
		}
	}
	// From pod a: the other pod, and a listener on the node's address.
	node, err := net.Listen("tcp", net.JoinHostPort(n.gateway.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	go func() {
		c, err := node.Accept()
		if err == nil {
			_, _ = io.WriteString(c, "node")
			_ = c.Close()
		}
	}()
	for addr, want := range map[string]string{net.JoinHostPort(ipB.String(), "8080"): "b", node.Addr().String(): "node"} {
		var c net.Conn
		err := a.do(func() (err error) { c, err = net.DialTimeout("tcp", addr, 2*time.Second); return err })
		if got, err := readConn(c, err); err != nil || got != want {
			t.Errorf("pod a → %s = %q, %v; want %q", addr, got, err, want)
		}
	}

	if got, err := readConn(dialInPod(t.Context(), b, 8080)); err != nil || got != "b" {
		t.Errorf("localhost:8080 in pod b = %q, %v", got, err)
	}
	if _, err := dialInPod(t.Context(), b, 9093); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("localhost:9093 in pod b, where only the pod IP listens: err = %v, want connection refused", err)
	}

	a.close()
	if _, err := netlink.LinkByName(a.hostIf); err == nil {
		t.Errorf("%s is still there after close", a.hostIf)
	}
	if got := hostIfName("kairo-250", net.IPv4(10, 244, 250, 254)); len(got) > maxIfName {
		t.Errorf("veth name %q is longer than the kernel allows", got)
	}
}
