// Package childproc starts the local cluster's child processes so that none
// of them can outlive the process that started them.
//
// Every child gets its own process group (so a stop reaches the grandchildren
// it forks) and PR_SET_PDEATHSIG=SIGKILL (so a crash or SIGKILL of the parent
// still takes the child down). Linux delivers the parent-death signal when
// the *thread* that forked the child exits, and the Go runtime may retire
// threads, so every fork happens on one goroutine locked to an OS thread that
// never exits.
package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

type startRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawnQueue = sync.OnceValue(func() chan startRequest {
	q := make(chan startRequest)
	go func() {
		// Never unlocked: this thread lives as long as the process, which is
		// what makes Pdeathsig mean "when this process dies".
		runtime.LockOSThread()
		for req := range q {
			req.done <- req.cmd.Start()
		}
	}()
	return q
})

// Start starts cmd like cmd.Start, in a new process group and with SIGKILL
// as its parent-death signal. Other SysProcAttr fields (namespaces, for
// instance) are kept.
func Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	req := startRequest{cmd: cmd, done: make(chan error, 1)}
	spawnQueue() <- req
	return <-req.done
}

// Process is a started child whose exit is observed by one goroutine.
type Process struct {
	Name string
	Cmd  *exec.Cmd

	done    chan struct{}
	waitErr error
	closers []func() error
}

// Launch starts path with args, its stdout and stderr appended to logPath,
// and returns once the process is running.
func Launch(name, path string, args []string, env []string, logPath string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	p, err := StartProcess(name, cmd)
	if err != nil {
		_ = logFile.Close()
		return nil, err
	}
	p.closers = append(p.closers, logFile.Close)
	return p, nil
}

// StartProcess starts cmd with Start and watches for its exit.
func StartProcess(name string, cmd *exec.Cmd) (*Process, error) {
	if err := Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		for _, c := range p.closers {
			_ = c()
		}
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns the exit error once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.waitErr
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the whole process group.
func (p *Process) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid(), sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Stop sends SIGTERM to the process group, waits up to grace, then sends
// SIGKILL, and returns once the process has been reaped.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		// The leader is gone; its group may still hold stragglers.
		_ = p.Signal(syscall.SIGKILL)
		return
	}
	_ = p.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}
