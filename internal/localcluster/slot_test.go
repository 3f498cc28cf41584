package localcluster

import (
	"errors"
	"net"
	"testing"
)

func TestSlotsAreExclusive(t *testing.T) {
	dir := t.TempDir()
	held := map[int]*slot{}
	defer func() {
		for _, s := range held {
			s.release()
		}
	}()
	for range lastSlot - firstSlot + 1 {
		s, err := acquireSlot(dir)
		if err != nil {
			t.Fatal(err)
		}
		if held[s.n] != nil {
			t.Fatalf("slot %d handed out twice", s.n)
		}
		held[s.n] = s
	}
	if _, err := acquireSlot(dir); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("all slots held: err = %v", err)
	}
	// A released slot is free again.
	var some *slot
	for _, s := range held {
		some = s
		break
	}
	some.release()
	delete(held, some.n)
	again, err := acquireSlot(dir)
	if err != nil || again.n != some.n {
		t.Fatalf("after release got %v, %v; want slot %d", again, err, some.n)
	}
	held[again.n] = again
}

func TestSlotAddresses(t *testing.T) {
	s := &slot{n: 42}
	for got, want := range map[string]string{
		s.nodeIP().String():              "127.0.42.1",
		s.podCIDR().String():             "127.0.42.0/24",
		s.serviceCIDR().String():         "127.1.42.0/24",
		s.kubernetesServiceIP().String(): "127.1.42.1",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if !s.serviceCIDR().Contains(s.kubernetesServiceIP()) || s.podCIDR().Contains(net.ParseIP("127.1.42.1")) {
		t.Error("ranges overlap or miss the kubernetes Service address")
	}
}
