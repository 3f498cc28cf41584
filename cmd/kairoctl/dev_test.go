package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/internal/heldport"
	"github.com/kairolog/kairolog/internal/syncbuf"
)

// portHeldOn holds a port free on every one of hosts until the test ends;
// the brokers bind it themselves (heldport.Hold).
func portHeldOn(t *testing.T, hosts ...string) int {
	t.Helper()
	for range 50 {
		first, err := heldport.Hold(hosts[0])
		if err != nil {
			t.Fatal(err)
		}
		held := []*heldport.Bound{first}
		for _, h := range hosts[1:] {
			b, err := heldport.HoldAt(net.JoinHostPort(h, strconv.Itoa(first.Port())))
			if err != nil {
				break
			}
			held = append(held, b)
		}
		if len(held) == len(hosts) {
			t.Cleanup(func() {
				for _, b := range held {
					b.Close()
				}
			})
			return first.Port()
		}
		for _, b := range held {
			b.Close()
		}
	}
	t.Fatal("no port free on every loopback address")
	return 0
}

// TestDevClusterAsDocumented runs `kairoctl dev cluster --brokers 3` as
// docs/running-locally.md describes it: three brokers on 127.0.0.1-3 with
// the same ports, a replicated topic through any of them, and a broker
// stopped on its own while the others keep serving.
func TestDevClusterAsDocumented(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs three broker processes")
	}
	bin := filepath.Join(t.TempDir(), "broker")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/kairolog/kairolog/cmd/broker").CombinedOutput(); err != nil {
		t.Fatalf("build the broker: %v\n%s", err, out)
	}
	hosts := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	httpPort, raftPort, peerPort := portHeldOn(t, hosts...), portHeldOn(t, hosts...), portHeldOn(t, hosts...)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCmd()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"dev", "cluster", "--brokers", "3", "--broker-bin", bin, "--data-dir", t.TempDir(),
			"--http-port", strconv.Itoa(httpPort), "--raft-port", strconv.Itoa(raftPort), "--peer-port", strconv.Itoa(peerPort),
			"--distinct-ports=false", "--log-level", "warn"})
		done <- cmd.ExecuteContext(ctx)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("dev cluster did not stop within a minute of Ctrl-C")
		}
		if t.Failed() {
			t.Logf("dev cluster output:\n%s", out.String())
		}
	}()

	urls := make([]string, 3)
	for i, h := range hosts {
		urls[i] = fmt.Sprintf("http://%s:%d", h, httpPort)
	}
	deadline := time.Now().Add(time.Minute)
	for _, u := range urls {
		c, _ := client.New(u)
		for c.Ready(ctx) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready", u)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mustRun(t, urls[1], "", "topics", "create", "orders", "--partitions", "6", "--replication-factor", "3", "--config", "min.insync.replicas=2")
	for _, u := range urls {
		c, _ := client.New(u)
		for deadline := time.Now().Add(10 * time.Second); ; {
			if d, err := c.DescribeTopic(ctx, "orders"); err == nil && replicatedThrice(d) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("orders not replicated on three brokers as seen from %s", u)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	mustRun(t, urls[1], "a\nb\nc\n", "produce", "orders", "--acks", "all")
	if got := mustRun(t, urls[2], "", "consume", "orders", "--group", "g", "--from-beginning", "--max", "3"); len(strings.Fields(got)) != 3 {
		t.Fatalf("consumed %q", got)
	}

	// Stop broker 2 on its own: the others keep serving.
	m := regexp.MustCompile(`broker 2: http://\S+ \(raft \S+, peer \S+\).*, pid (\d+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no pid for broker 2 in the output")
	}
	pid, _ := strconv.Atoi(m[1])
	p, _ := os.FindProcess(pid)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(45 * time.Second); !strings.Contains(out.String(), "broker 2 exited"); {
		if time.Now().After(deadline) {
			t.Fatal("broker 2's exit was not reported")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "Start it again with:") {
		t.Fatal("no restart command printed for broker 2")
	}
	mustRun(t, urls[0], "d\n", "produce", "orders", "--partition", "0", "--acks", "all")
	mustRun(t, urls[0], "", "cluster", "brokers")
}

func replicatedThrice(d *api.TopicDescription) bool {
	for _, p := range d.Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 || p.Leader < 0 {
			return false
		}
	}
	return len(d.Partitions) == 6
}
