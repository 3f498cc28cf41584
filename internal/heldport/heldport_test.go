package heldport

import (
	"net"
	"testing"
)

// TestReservedPortsStayTaken: every address Reserve returns is distinct
// and stays bound until Listen takes it, so one test broker's port can
// never turn out to be another's, or an outgoing connection's, by the
// time the broker starts; Listen then hands over that very socket, and
// binds the address again once it was closed (a restarted broker).
func TestReservedPortsStayTaken(t *testing.T) {
	seen := map[string]bool{}
	for range 300 {
		addr := Reserve(t)
		if seen[addr] {
			t.Fatalf("Reserve returned %s twice", addr)
		}
		seen[addr] = true
	}
	for addr := range seen {
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("reserved address %s could be bound by someone else", addr)
		}
	}
	addr := Reserve(t)
	ln, err := Listen(addr)
	if err != nil || ln.Addr().String() != addr {
		t.Fatalf("Listen(%s) = %v, %v; want the held listener", addr, ln, err)
	}
	if _, err := net.Listen("tcp", addr); err == nil {
		t.Fatalf("%s was free after Listen took it", addr)
	}
	ln.Close()
	again, err := Listen(addr)
	if err != nil {
		t.Fatalf("Listen(%s) after close: %v", addr, err)
	}
	again.Close()
}
