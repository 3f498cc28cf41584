// Package heldport holds the loopback TCP ports of the brokers a test
// starts, from the moment it picks them until the broker serves on them,
// so nothing else — another test's broker, an outgoing connection — can
// take a port in between, as it could if the port were only picked and
// bound later.
//
// A broker in the test's own process: Reserve binds a free port and keeps
// the listener until Listen hands it to the broker. A broker process:
// Bind holds a free port as a bound socket and Pass hands it to the
// process, whose broker listens on it (cmd/broker, KAIROLOG_LISTEN_FDS).
// A program that cannot be handed a socket and binds its port itself
// (etcd, kube-apiserver, kubectl port-forward): Hold keeps the kernel from
// giving the port to anyone else while the program binds it.
package heldport

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"
)

// TB is the part of testing.TB that Reserve uses; the package imports no
// testing code, so commands may hold ports with it too.
type TB interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// held are the listeners of reserved ports that no broker has taken yet.
var held = struct {
	mu sync.Mutex
	ln map[string]net.Listener
}{ln: map[string]net.Listener{}}

// Reserve binds a free loopback port and returns its address; the port
// stays bound until Listen takes it or the test ends.
func Reserve(t TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	held.mu.Lock()
	held.ln[addr] = ln
	held.mu.Unlock()
	t.Cleanup(func() {
		if ln := take(addr); ln != nil {
			ln.Close()
		}
	})
	return addr
}

// Listen returns the held listener of addr, or binds addr again: a broker
// restarted on the addresses of one that stopped. The stopped broker's
// socket may linger briefly, so "address already in use" is retried for
// up to 10 s.
func Listen(addr string) (net.Listener, error) {
	if ln := take(addr); ln != nil {
		return ln, nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func take(addr string) net.Listener {
	held.mu.Lock()
	defer held.mu.Unlock()
	ln := held.ln[addr]
	delete(held.ln, addr)
	return ln
}
