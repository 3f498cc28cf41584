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

// TestBoundPortsStayTakenAndRefuse: a port held for a broker process is
// refused to a caller, as any closed port, yet no listener can bind it
// and port 0 never yields it; once given up, Rebind holds it again.
func TestBoundPortsStayTakenAndRefuse(t *testing.T) {
	held := map[string]*Bound{}
	for range 100 {
		b, err := Bind("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if held[b.Addr()] != nil {
			t.Fatalf("Bind returned %s twice", b.Addr())
		}
		held[b.Addr()] = b
	}
	expectPort0Skips(t, held)
	for addr := range held {
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("held address %s could be bound by someone else", addr)
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Fatalf("a connection to held address %s was accepted", addr)
		}
	}
	for addr, b := range held {
		b.Close()
		again, err := Rebind(addr)
		if err != nil {
			t.Fatalf("Rebind(%s): %v", addr, err)
		}
		if again.Addr() != addr {
			t.Fatalf("Rebind(%s) holds %s", addr, again.Addr())
		}
		again.Close()
		break
	}
	if _, err := Bind("localhost"); err == nil {
		t.Fatal("Bind(localhost): no error for a host that is no IPv4 address")
	}
}

// TestHeldPortsAreBoundOnlyByTheirProgram: a port held for a program that
// binds it itself can be listened on explicitly, as that program does,
// yet port 0 never yields it while it is held.
func TestHeldPortsAreBoundOnlyByTheirProgram(t *testing.T) {
	held := map[string]*Bound{}
	for range 100 {
		b, err := Hold("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		held[b.Addr()] = b
	}
	expectPort0Skips(t, held)
	for addr := range held {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the program for %s cannot bind it: %v", addr, err)
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.Close()
		ln.Close()
	}
}

// expectPort0Skips binds port 0 300 times and fails if the kernel picks a
// held port.
func expectPort0Skips(t *testing.T, held map[string]*Bound) {
	t.Helper()
	for range 300 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		if held[ln.Addr().String()] != nil {
			t.Fatalf("port 0 gave %s, which is held", ln.Addr())
		}
	}
}
