package childproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a parent that starts a child
// through this package and then waits to be killed.
const helperEnv = "CHILDPROC_TEST_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		p, err := Launch("sleeper", "/bin/sleep", []string{"300"}, nil, os.DevNull)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		select {}
	}
	os.Exit(m.Run())
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		// A zombie is gone for our purposes: it holds no resources but a pid.
		state, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if !alive(pid) || strings.Contains(string(state), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d outlived its parent", pid)
}

// requireProcesses skips a test that starts processes when -short asks for
// tests that start none.
func requireProcesses(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
}

func TestChildDiesWithItsParent(t *testing.T) {
	requireProcesses(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper said %q", line)
	}
	if !alive(child) {
		t.Fatal("child is not running")
	}
	// SIGKILL leaves the parent no chance to clean up: only the kernel's
	// parent-death signal can take the child down.
	_ = parent.Process.Kill()
	_ = parent.Wait()
	waitGone(t, child)
}

func TestStopReachesTheWholeGroup(t *testing.T) {
	requireProcesses(t)
	log := filepath.Join(t.TempDir(), "log")
	// A shell that ignores SIGTERM and has a background grandchild.
	p, err := Launch("shell", "/bin/sh", []string{"-c", `trap "" TERM; sleep 300 & echo $!; wait`}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	deadline := time.Now().Add(5 * time.Second)
	for grandchild == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(log)
		grandchild, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if grandchild == 0 {
		t.Fatal("no grandchild pid")
	}
	began := time.Now()
	p.Stop(300 * time.Millisecond)
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Errorf("Stop returned after %s, before the grace period of a process ignoring SIGTERM", d)
	}
	if !p.Exited() {
		t.Error("Stop returned before the process was reaped")
	}
	waitGone(t, grandchild)
}

func TestLaunchReportsAMissingBinary(t *testing.T) {
	_, err := Launch("ghost", "/nonexistent/binary", nil, nil, filepath.Join(t.TempDir(), "log"))
	if err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("err = %v", err)
	}
}
