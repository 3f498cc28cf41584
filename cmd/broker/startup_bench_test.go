package main

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/heldport"
)

// BenchmarkSingleBrokerStartup starts a one-voter broker process on an
// empty data directory and measures, from the exec: until /health answers
// 200 (health-ms), until a POST /topics right after it is created (create-ms:
// the request waits for the metadata, never fails), and until /ready is 200
// (ready-ms: __consumer_offsets created and its coordinators loaded).
//
//	go test ./cmd/broker -run '^$' -bench SingleBrokerStartup -benchtime 20x
func BenchmarkSingleBrokerStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "broker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	var health, created, ready time.Duration
	for i := 0; i < b.N; i++ {
		held := holdPorts(b, "127.0.0.1", 3)
		httpAddr := held[0].Addr()
		base := "http://" + httpAddr
		cmd := exec.Command(bin, "--listen", httpAddr, "--raft-listen", held[1].Addr(), "--peer-listen", held[2].Addr(),
			"--kafka-listen", "127.0.0.1:0", "--kafka-gateway-listen", "127.0.0.1:0",
			"--data-dir", b.TempDir(), "--log-level", "warn")
		if err := heldport.Pass(cmd, held...); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		err := cmd.Start()
		for _, h := range held {
			h.Close()
		}
		if err != nil {
			b.Fatal(err)
		}
		until := func(what string, ok func() bool) time.Duration {
			for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					b.Fatalf("no %s after 30 s", what)
				}
			}
			return time.Since(start)
		}
		health += until("/health", func() bool { st, _ := call(b, "GET", base+"/health", ""); return st == 200 })
		st, body := call(b, "POST", base+"/topics", `{"name":"orders"}`)
		if st != 201 {
			cmd.Process.Kill()
			b.Fatalf("POST /topics right after /health: %d %s", st, body)
		}
		created += time.Since(start)
		ready += until("/ready", func() bool { st, _ := call(b, "GET", base+"/ready", ""); return st == 200 })
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	n := float64(b.N)
	b.ReportMetric(float64(health.Milliseconds())/n, "health-ms")
	b.ReportMetric(float64(created.Milliseconds())/n, "create-ms")
	b.ReportMetric(float64(ready.Milliseconds())/n, "ready-ms")
}
