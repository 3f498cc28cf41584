package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/heldport"
)

// TestBrokerProcess builds cmd/broker, runs it as a process, stores records
// and group state, stops it with SIGTERM and starts it again on the same
// data directory.
func TestBrokerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the broker binary")
	}
	bin := filepath.Join(t.TempDir(), "broker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	data := t.TempDir()
	held := holdPorts(t, "127.0.0.1", 3)
	httpAddr, raftAddr, peerAddr := held[0].Addr(), held[1].Addr(), held[2].Addr()
	cfg := filepath.Join(t.TempDir(), "broker.properties")
	os.WriteFile(cfg, []byte("num.partitions=2\noffsets.topic.num.partitions=2\n"), 0o644)
	// start runs the broker on the sockets held for its ports.
	start := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, "--listen", httpAddr, "--raft-listen", raftAddr, "--peer-listen", peerAddr, "--config-file", cfg,
			"--kafka-listen", "127.0.0.1:0", "--kafka-gateway-listen", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "KAIRO_DATA_DIR="+data, "KAIRO_LOG_LEVEL=debug")
		if err := heldport.Pass(cmd, held...); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &logs, &logs
		err := cmd.Start()
		for _, h := range held {
			h.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			if st, _ := call(t, "GET", "http://"+httpAddr+"/ready", ""); st == 200 {
				return cmd, &logs
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("broker not ready:\n%s", logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	stop := func(cmd *exec.Cmd, logs *bytes.Buffer) {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("broker exited with %v:\n%s", err, logs.String())
			}
		case <-time.After(45 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("broker did not stop on SIGTERM:\n%s", logs.String())
		}
	}

	base := "http://" + httpAddr
	cmd, logs := start()
	mustCall(t, "POST", base+"/topics", `{"name":"orders"}`, 201, `"partitions":2`)
	mustCall(t, "POST", base+"/produce", `{"topic":"orders","partition":1,"message":"created order 123"}`, 200, `"offset":0`)
	mustCall(t, "POST", base+"/groups/join", `{"group":"analytics-workers","member_id":"member-a"}`, 200, `"joined"`)
	mustCall(t, "POST", base+"/groups/rebalance", `{"group":"analytics-workers","topic":"orders"}`, 200, `"partitions":[0,1]`)
	mustCall(t, "POST", base+"/offsets/commit", `{"group":"analytics-workers","topic":"orders","partition":1,"offset":1}`, 200, `"committed"`)
	// Without a secret file the lone broker made up its own cluster
	// secret: its peer listener refuses every caller, and the client port
	// does not know the broker-to-broker paths.
	mustCall(t, "POST", "http://"+peerAddr+"/internal/controller/delete-topic", `{"name":"orders"}`, 401, `"code":"UNAUTHENTICATED"`)
	mustCall(t, "POST", base+"/internal/controller/delete-topic", `{"name":"orders"}`, 404, `"code":"NOT_FOUND"`)
	mustCall(t, "GET", base+"/topics/orders", "", 200, `"name":"orders"`)
	// Nor does the client port change the internal topic.
	mustCall(t, "PATCH", base+"/topics/__consumer_offsets/config", `{"config":{"retention.ms":"1"}}`, 403, `"code":"INTERNAL_TOPIC"`)
	mustCall(t, "DELETE", base+"/topics/__consumer_offsets", "", 403, `"code":"INTERNAL_TOPIC"`)
	stop(cmd, logs)
	if !strings.Contains(logs.String(), "Broker stopped") {
		t.Fatalf("no graceful stop in the logs:\n%s", logs.String())
	}
	if _, err := os.Stat(filepath.Join(data, "orders-1", ".clean-shutdown")); err != nil {
		t.Errorf("no clean-shutdown marker after SIGTERM: %v", err)
	}

	for i, addr := range []string{httpAddr, raftAddr, peerAddr} {
		var err error
		if held[i], err = heldport.Rebind(addr); err != nil {
			t.Fatal(err)
		}
	}
	cmd, logs = start()
	defer stop(cmd, logs)
	mustCall(t, "GET", base+"/topics", "", 200, `{"topics":["orders"]}`)
	mustCall(t, "GET", base+"/fetch?topic=orders&partition=1&offset=0", "", 200, `"message":"created order 123"`)
	mustCall(t, "GET", base+"/offsets?group=analytics-workers&topic=orders&partition=1", "", 200, `"offset":1,"found":true`)
	mustCall(t, "GET", base+"/groups/assignments?group=analytics-workers&topic=orders", "", 200, `"found":true`)
	mustCall(t, "GET", base+"/groups/members?group=analytics-workers", "", 200, `"id":"member-a"`)
	mustCall(t, "GET", base+"/metrics", "", 200, `kairo_high_watermark{broker="0",partition="1",topic="orders"} 1`)
}

// holdPorts holds n free ports on host until a broker process takes them.
func holdPorts(t testing.TB, host string, n int) []*heldport.Bound {
	t.Helper()
	held := make([]*heldport.Bound, n)
	for i := range held {
		b, err := heldport.Bind(host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		held[i] = b
	}
	return held
}

// TestBrokerRefusesStraySockets: a broker passed a socket that none of its
// listen addresses names stops with an error naming the socket, rather than
// serving on ports its starter does not expect.
func TestBrokerRefusesStraySockets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the broker binary")
	}
	bin := filepath.Join(t.TempDir(), "broker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	held := holdPorts(t, "127.0.0.1", 2)
	cmd := exec.Command(bin, "--listen", held[0].Addr(), "--data-dir", t.TempDir(), "--raft-listen", "127.0.0.1:0",
		"--peer-listen", "127.0.0.1:0", "--kafka-listen", "127.0.0.1:0", "--kafka-gateway-listen", "127.0.0.1:0")
	if err := heldport.Pass(cmd, held...); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	want := "KAIROLOG_LISTEN_FDS: the sockets bound to [" + held[1].Addr() + "] serve none of the listen addresses"
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("broker with a stray socket: %v\n%s\nwant an error containing %q", err, out, want)
	}
}

func call(t testing.TB, method, url, body string) (int, string) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func mustCall(t *testing.T, method, url, body string, status int, contains string) {
	t.Helper()
	st, b := call(t, method, url, body)
	if st != status || !strings.Contains(b, contains) {
		t.Fatalf("%s %s: %d %s; want %d containing %s", method, url, st, b, status, contains)
	}
}
