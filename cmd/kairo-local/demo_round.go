package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/internal/localcluster"
	"github.com/kairolog/kairolog/internal/localcluster/childproc"
)

// round runs `kubectl port-forward svc/<cluster> <port>:8080`, produces one
// record and fetches it back through it, and stops the port-forward so the
// user's own can take the port. It returns the fetched record's value.
func (d *demoRun) round(ctx context.Context, t roundTarget) (string, error) {
	if t.topic == "" {
		return "", errors.New("the samples have no Topic for the cluster")
	}
	port, holder := d.o.localPort, ""
	if !portFree(port) {
		// kubectl picks a free port itself (port 0) and says which.
		if holder = localcluster.PortHolder(port); holder == "" {
			holder = "another process"
		}
		fmt.Fprintf(d.out, "          (local port %d is taken on this machine by %s; the demo lets kubectl pick another)\n", port, holder)
		port = 0
	}
	pf, port, err := d.portForward(ctx, t, port)
	if err != nil {
		return "", err
	}
	defer pf.Stop(2 * time.Second)
	if holder != "" {
		fmt.Fprintf(d.out, "          (kubectl forwards local port %d)\n", port)
	}
	d.forwardPort, d.heldPort = port, holder

	base := "http://localhost:" + strconv.Itoa(port)
	value := "hello from make demo at " + time.Now().Format(time.TimeOnly)
	// acks=all answers once every in-sync replica has the record, so the
	// fetch right after it sees it (a consumer reads up to the high
	// watermark; with acks=1 it may lag the reply by a moment).
	body, _ := json.Marshal(map[string]string{"topic": t.topic, "key": "demo", "value": value, "acks": "all"})
	fmt.Fprintf(d.out, "          $ curl -s -X POST %s/produce -d '%s'\n", base, body)
	var produced struct {
		Partition int   `json:"partition"`
		Offset    int64 `json:"offset"`
	}
	reply, err := retryHTTP(ctx, func() (*http.Response, error) {
		return http.Post(base+"/produce", "application/json", bytes.NewReader(body))
	})
	if err != nil {
		return "", fmt.Errorf("produce: %w", err)
	}
	fmt.Fprintf(d.out, "          %s\n", reply)
	if err := json.Unmarshal([]byte(reply), &produced); err != nil {
		return "", fmt.Errorf("produce reply %q: %w", reply, err)
	}
	fetchURL := fmt.Sprintf("%s/fetch?topic=%s&partition=%d&offset=%d", base, t.topic, produced.Partition, produced.Offset)
	fmt.Fprintf(d.out, "          $ curl -s '%s'\n", fetchURL)
	reply, err = retryHTTP(ctx, func() (*http.Response, error) { return http.Get(fetchURL) })
	if err != nil {
		return "", fmt.Errorf("fetch: %w", err)
	}
	fmt.Fprintf(d.out, "          %s\n", reply)
	var fetched struct {
		Records []struct {
			Offset  int64  `json:"offset"`
			Message string `json:"message"`
			Value   string `json:"value"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(reply), &fetched); err != nil {
		return "", fmt.Errorf("fetch reply %q: %w", reply, err)
	}
	for _, r := range fetched.Records {
		if r.Offset == produced.Offset && (r.Message == value || r.Value == value) {
			fmt.Fprintf(d.out, "          fetched %q back from %s partition %d offset %d\n", value, t.topic, produced.Partition, produced.Offset)
			return value, nil
		}
	}
	return "", fmt.Errorf("the fetch did not return the produced record: %s", reply)
}

// portForward starts kubectl port-forward from local port (0: one kubectl
// picks) and waits until it listens; it returns the local port.
func (d *demoRun) portForward(ctx context.Context, t roundTarget, port int) (*childproc.Process, int, error) {
	log, err := os.Create(filepath.Join(d.logDir, "port-forward.log"))
	if err != nil {
		return nil, 0, err
	}
	args := []string{"port-forward", "--namespace", t.namespace, "svc/" + t.service, fmt.Sprintf("%d:8080", port)}
	switch port {
	case 8080:
		args[len(args)-1] = "8080" // as the README writes it
	case 0:
		args[len(args)-1] = ":8080"
	}
	fmt.Fprintf(d.out, "          $ kubectl %s &\n", strings.Join(args, " "))
	cmd := exec.Command("kubectl", args...)
	cmd.Env = d.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = log.Close()
		return nil, 0, err
	}
	cmd.Stderr = log
	p, err := childproc.StartProcess("kubectl port-forward", cmd)
	if err != nil {
		_ = log.Close()
		return nil, 0, err
	}
	listening := make(chan int, 1)
	go func() {
		defer log.Close()
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if local, ok := forwardedPort(sc.Text()); ok && !once {
				once = true
				listening <- local
			}
		}
	}()
	select {
	case local := <-listening:
		return p, local, nil
	case <-p.Done():
		return nil, 0, fmt.Errorf("kubectl port-forward exited: %v; see %s", p.Err(), log.Name())
	case <-time.After(30 * time.Second):
		p.Stop(time.Second)
		return nil, 0, errors.New("kubectl port-forward did not start listening within 30s")
	case <-ctx.Done():
		p.Stop(time.Second)
		return nil, 0, ctx.Err()
	}
}

// forwardLine is kubectl port-forward's "Forwarding from 127.0.0.1:8080 ->
// 8080" (or "[::1]:8080 -> 8080").
var forwardLine = regexp.MustCompile(`^Forwarding from (?:\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:]*\]):(\d+) -> \d+`)

// forwardedPort is the local port of a line of kubectl port-forward's
// output that says it listens.
func forwardedPort(line string) (int, bool) {
	m := forwardLine.FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	port, err := strconv.Atoi(m[1])
	return port, err == nil && port > 0
}

// retryHTTP retries a request while the brokers settle (a leader moving
// right after the cluster turned Ready answers 503) and returns the body of
// the first 2xx answer.
func retryHTTP(ctx context.Context, do func() (*http.Response, error)) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := do()
		var body []byte
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode < 300 {
				return strings.TrimSpace(string(body)), nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
			if resp.StatusCode < 500 {
				return "", err
			}
		}
		if time.Now().After(deadline) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// portFree reports whether port can be listened on on localhost (both
// families, as kubectl port-forward listens on both).
func portFree(port int) bool {
	for _, addr := range []string{"127.0.0.1", "[::1]"} {
		l, err := net.Listen("tcp", addr+":"+strconv.Itoa(port))
		if err != nil {
			if addr == "[::1]" && strings.Contains(err.Error(), "cannot assign requested address") {
				continue // no IPv6 on this machine
			}
			return false
		}
		_ = l.Close()
	}
	return true
}
