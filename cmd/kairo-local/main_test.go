package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kairolog/kairolog/internal/localcluster"
)

func TestFlags(t *testing.T) {
	o := upFlags(&strings.Builder{})
	if err := o.fs.Parse([]string{"--state-dir", "/tmp/x", "--image-map", "ghcr.io/kairolog/broker:v1=/opt/broker", "--image-map", "team/tool=rel/tool"}); err != nil {
		t.Fatal(err)
	}
	if o.stateDir != "/tmp/x" {
		t.Errorf("state dir %q", o.stateDir)
	}
	if got := o.images.m["kairolog/broker"].Binary; got != "/opt/broker" {
		t.Errorf("broker maps to %q", got)
	}
	if got := o.images.m["team/tool"].Binary; !filepath.IsAbs(got) {
		t.Errorf("a relative binary should be made absolute, got %q", got)
	}
	if binaryImages(o.binaryImages, o.images) == nil {
		t.Error("--image-map did not turn the binary fallback on")
	}
	plain := upFlags(&strings.Builder{})
	if err := plain.fs.Parse([]string{"--state-dir", "/tmp/x"}); err != nil {
		t.Fatal(err)
	}
	if binaryImages(plain.binaryImages, plain.images) != nil {
		t.Error("without --binary-images or --image-map the cluster must pull images")
	}
	if err := upFlags(&strings.Builder{}).fs.Parse([]string{"--image-map", "nonsense"}); err == nil {
		t.Error("a mapping without '=' was accepted")
	}
	if err := up([]string{}); err == nil || !strings.Contains(err.Error(), "--state-dir") {
		t.Errorf("up without --state-dir: %v", err)
	}
}

// TestUpAndStop runs the command as a user does: it must come up, stop every
// process and remove its bridge on SIGTERM, start clean again on the same
// directory, and leave no process behind even when it is killed with
// SIGKILL (its bridge goes with the next start).
func TestUpAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local node needs root")
	}
	repo, err := localcluster.FindRepoDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", "k8s", "kube-apiserver")); err != nil {
		t.Fatalf("%v: run hack/build-k8s-binaries.sh first (or go test -short)", err)
	}
	bin := filepath.Join(t.TempDir(), "kairo-local")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	state := filepath.Join(t.TempDir(), "cluster")

	// First run: up, then SIGTERM.
	cmd, children, bridge := startUp(t, bin, repo, state)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kairo-local exited with %v after SIGTERM", err)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("kairo-local did not stop on SIGTERM")
	}
	for _, pid := range children {
		if alive(pid) {
			t.Errorf("process %d survived the stop", pid)
		}
	}
	if linkExists(bridge) {
		t.Errorf("bridge %s survived the stop", bridge)
	}

	// Second run on the same directory: a clean start, then SIGKILL.
	cmd, children, bridge = startUp(t, bin, repo, state)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range children {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("process %d outlived a SIGKILLed kairo-local", pid)
		}
	}

	// The killed cluster's bridge stays until the next cluster starts, on
	// any slot: that start removes it.
	cluster, err := localcluster.Start(t.Context(), localcluster.Options{StateDir: t.TempDir(), RepoDir: repo})
	if err != nil {
		t.Fatal(err)
	}
	cluster.Stop()
	if linkExists(bridge) {
		t.Errorf("bridge %s of the killed cluster survived the next start", bridge)
	}
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// startUp runs `kairo-local up` until it reports the cluster is up and
// returns the processes it started.
func startUp(t *testing.T, bin, repo, state string) (*exec.Cmd, []int, string) {
	t.Helper()
	cmd := exec.Command(bin, "up", "--state-dir", state, "--repo", repo)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	up := make(chan error, 1)
	var bridge string
	go func() {
		sc := bufio.NewScanner(out)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if _, rest, ok := strings.Cut(sc.Text(), " on bridge "); ok {
				bridge, _, _ = strings.Cut(rest, ",")
			}
			if strings.Contains(sc.Text(), "Cluster is up") {
				up <- nil
				for sc.Scan() {
				}
				return
			}
		}
		up <- errors.New("kairo-local exited before the cluster was up:\n" + strings.Join(seen, "\n"))
	}()
	select {
	case err := <-up:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("cluster not up after 90s")
	}
	if _, err := os.Stat(filepath.Join(state, "kubeconfig")); err != nil {
		t.Fatalf("no kubeconfig: %v", err)
	}
	children := childrenOf(cmd.Process.Pid)
	if len(children) < 4 {
		t.Fatalf("expected at least the four control-plane processes, found %v", children)
	}
	if !linkExists(bridge) {
		t.Fatalf("no bridge %q for the cluster's pods", bridge)
	}
	return cmd, children, bridge
}

func childrenOf(parent int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut at the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			out = append(out, pid)
		}
	}
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
