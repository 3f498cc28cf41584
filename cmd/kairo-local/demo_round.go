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
	port := d.o.localPort
	if !portFree(port) {
		free, err := freeLocalPort()
		if err != nil {
			return "", err
		}
		holder := localcluster.PortHolder(port)
		if holder == "" {
			holder = "another process"
		}
		fmt.Fprintf(d.out, "          (local port %d is taken on this machine by %s; the demo forwards %d instead)\n", port, holder, free)
		d.heldPort = holder
		port = free
	}
	d.forwardPort = port
	pf, err := d.portForward(ctx, t, port)
	if err != nil {
		return "", err
	}
	defer pf.Stop(2 * time.Second)

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

// portForward starts kubectl port-forward and waits until it listens.
func (d *demoRun) portForward(ctx context.Context, t roundTarget, port int) (*childproc.Process, error) {
	log, err := os.Create(filepath.Join(d.logDir, "port-forward.log"))
	if err != nil {
		return nil, err
	}
	args := []string{"port-forward", "--namespace", t.namespace, "svc/" + t.service, fmt.Sprintf("%d:8080", port)}
	if port == 8080 {
		args[len(args)-1] = "8080" // as the README writes it
	}
	fmt.Fprintf(d.out, "          $ kubectl %s &\n", strings.Join(args, " "))
	cmd := exec.Command("kubectl", args...)
	cmd.Env = d.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = log.Close()
		return nil, err
	}
	cmd.Stderr = log
	p, err := childproc.StartProcess("kubectl port-forward", cmd)
	if err != nil {
		_ = log.Close()
		return nil, err
	}
	listening := make(chan struct{})
	go func() {
		defer log.Close()
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if !once && strings.HasPrefix(sc.Text(), "Forwarding from") {
				once = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
		return p, nil
	case <-p.Done():
		return nil, fmt.Errorf("kubectl port-forward exited: %v; see %s", p.Err(), log.Name())
	case <-time.After(30 * time.Second):
		p.Stop(time.Second)
		return nil, errors.New("kubectl port-forward did not start listening within 30s")
	case <-ctx.Done():
		p.Stop(time.Second)
		return nil, ctx.Err()
	}
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

func freeLocalPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
