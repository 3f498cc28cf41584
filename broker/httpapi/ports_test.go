package httpapi_test

import (
	"net"
	"testing"
)

// TestReservedPortsStayTaken guards the harness itself: every address
// freePort returns is distinct and stays bound until a broker takes it, so
// one test broker's raft port can never turn out to be another's, or an
// outgoing connection's, by the time the broker starts.
func TestReservedPortsStayTaken(t *testing.T) {
	seen := map[string]bool{}
	for range 300 {
		addr := freePort(t)
		if seen[addr] {
			t.Fatalf("freePort returned %s twice", addr)
		}
		seen[addr] = true
	}
	for addr := range seen {
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("reserved address %s could be bound by someone else", addr)
		}
	}
	// startNode takes the reservation over.
	n := startSingle(t, nodeOptions{})
	n.expect(t, "GET", "/health", "", 200)
}
