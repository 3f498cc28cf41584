package hostile

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/brokertest"
)

// raiseFileLimit raises the soft limit on open files to at least want (up
// to the hard limit), for this process and the brokers it starts.
func raiseFileLimit(t *testing.T, want uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= want {
		return
	}
	if lim.Max < want {
		t.Fatalf("the open-file hard limit is %d; this test needs %d (raise it with ulimit -Hn)", lim.Max, want)
	}
	lim.Cur = want
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// startBroker starts one broker process with props and waits until it is
// ready.
func startBroker(t *testing.T, props map[string]string) *brokertest.Cluster {
	t.Helper()
	c, err := brokertest.NewCluster(brokertest.Options{Brokers: 1, Config: props, LogLevel: "warn"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("broker not ready: %v\n%s", err, tail(c.LogFile(0)))
	}
	return c
}

// memoryKiB reads a field (VmRSS, VmHWM) of /proc/pid/status in KiB.
func memoryKiB(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// tail returns the end of a log file, for failure messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
