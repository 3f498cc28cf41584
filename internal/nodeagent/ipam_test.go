package nodeagent

import (
	"errors"
	"net"
	"testing"
)

func TestIPPool(t *testing.T) {
	_, cidr, _ := net.ParseCIDR("127.0.42.0/29") // .1 … .6 usable
	p := newIPPool(cidr, net.ParseIP("127.0.42.1"))

	a, err := p.allocate("ns/a")
	if err != nil || a.String() != "127.0.42.2" {
		t.Fatalf("first = %v, %v; want 127.0.42.2 (the node has .1)", a, err)
	}
	if again, _ := p.allocate("ns/a"); !again.Equal(a) {
		t.Fatalf("same owner got %v, want %v", again, a)
	}
	b, _ := p.allocate("ns/b")
	if b.String() != "127.0.42.3" {
		t.Fatalf("second = %v", b)
	}
	p.release("ns/a")
	c, _ := p.allocate("ns/c")
	if c.String() != "127.0.42.4" {
		t.Fatalf("after a release the next address is %v, want 127.0.42.4 (no immediate reuse)", c)
	}
	for _, o := range []string{"d", "e", "f"} {
		if _, err := p.allocate(o); err != nil {
			t.Fatalf("allocate %s: %v", o, err)
		}
	}
	// .2 (freed) was reused after the range wrapped; now nothing is left.
	if _, err := p.allocate("g"); !errors.Is(err, ErrNoPodIP) {
		t.Fatalf("full pool: err = %v", err)
	}
}
