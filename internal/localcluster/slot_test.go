package localcluster

import (
	"errors"
	"net"
	"strconv"
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
		s.nodeIP().String():              "10.244.42.1",
		s.podCIDR().String():             "10.244.42.0/24",
		s.serviceCIDR().String():         "10.96.42.0/24",
		s.kubernetesServiceIP().String(): "10.96.42.1",
		s.bridgeName():                   "kairo-42",
		hostIfNameLength(s):              "true",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if !s.serviceCIDR().Contains(s.kubernetesServiceIP()) || !s.podCIDR().Contains(s.nodeIP()) || s.podCIDR().Contains(net.ParseIP("10.96.42.1")) {
		t.Error("ranges overlap or miss the kubernetes Service address")
	}
}

// hostIfNameLength checks that the longest veth name of the last slot fits
// the kernel's 15 characters.
func hostIfNameLength(*slot) string {
	return strconv.FormatBool(len(bridgeName(lastSlot)+"-254") <= 15)
}
