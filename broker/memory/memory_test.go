package memory

import (
	"errors"
	"testing"
)

func TestChargesStayWithinThePool(t *testing.T) {
	p := NewPool("queued.max.request.bytes", 100, 20)
	large, small := NewAccount(false), NewAccount(true)
	steps := []struct {
		what   string
		acct   *Account
		charge int64
		fits   bool
		inUse  int64
	}{
		{"a large request takes the shared part", large, 70, true, 70},
		{"but never the reserve", large, 20, false, 70},
		{"a small request takes what is shared", small, 10, true, 80},
		{"then the reserve", small, 20, true, 100},
		{"and nothing beyond the pool", small, 1, false, 100},
	}
	for _, s := range steps {
		err := s.acct.Charge(p, s.charge)
		if (err == nil) != s.fits || (err != nil && !errors.Is(err, ErrExhausted)) {
			t.Fatalf("%s: charge %d: %v", s.what, s.charge, err)
		}
		if got := p.InUse(); got != s.inUse {
			t.Fatalf("%s: in use %d, want %d", s.what, got, s.inUse)
		}
	}
	if p.Refused() != 2 {
		t.Fatalf("refused %d, want 2", p.Refused())
	}
	// Returning part of the small request's charge frees shared bytes
	// first; the large request then fits again.
	small.Return(p, 10)
	if err := large.Charge(p, 10); err != nil {
		t.Fatalf("after a return: %v", err)
	}
	large.Release()
	small.Release()
	if p.InUse() != 0 {
		t.Fatalf("in use %d after every release", p.InUse())
	}
	if err := NewAccount(false).Charge(p, 80); err != nil {
		t.Fatalf("the whole shared part after the releases: %v", err)
	}
	if err := NewAccount(true).Charge(p, 20); err != nil {
		t.Fatalf("the whole reserve after the releases: %v", err)
	}
}

func TestNilAccountChargesNothing(t *testing.T) {
	p := NewPool("x", 1, 0)
	var a *Account
	if err := a.Charge(p, 100); err != nil {
		t.Fatal(err)
	}
	a.Return(p, 100)
	a.Release()
	if p.InUse() != 0 {
		t.Fatal("a nil account charged the pool")
	}
}
