package nodeagent

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	utilexec "k8s.io/utils/exec"
)

// containerExec serves /exec/{namespace}/{pod}/{container} (`kubectl exec`):
// the command runs in the container's mount, UTS, PID and network
// namespaces, inside its root filesystem, as its user, with its environment
// and working directory, so only what the image holds can run (the broker
// image has kairoctl and no shell). With a mapped binary (the developer
// fallback) a command naming one of the image's tools runs that tool and
// anything else runs from the node. There is no terminal: -t gets plain
// pipes.
func (a *Agent) containerExec(ctx context.Context, namespace, pod, container string, cmd []string, attach api.AttachIO) error {
	if len(cmd) == 0 {
		return errdefs.InvalidInput("no command")
	}
	pr, err := a.provider.runtimeFor(namespace, pod)
	if err != nil {
		return err
	}
	var c *containerRuntime
	for _, cr := range pr.containers {
		if cr.spec.Name == container {
			c = cr
		}
	}
	if c == nil {
		return errdefs.NotFoundf("container %s is not valid for pod %s", container, pod)
	}
	pr.mu.Lock()
	proc, img, env, user := c.proc, c.image, c.env, c.user
	pr.mu.Unlock()
	if proc == nil {
		return errdefs.InvalidInputf("container %s in pod %s is not running", container, pod)
	}
	argv := append([]string{}, cmd...)
	if img.binary != nil {
		if tool, ok := img.binary.Tools[filepath.Base(argv[0])]; ok {
			argv[0] = tool
		}
	}
	command := exec.CommandContext(ctx, "nsenter", append(nsenterArgs(proc.Pid(), user), argv...)...)
	command.Env = env
	if in := attach.Stdin(); in != nil {
		command.Stdin = in
	}
	if out := attach.Stdout(); out != nil {
		defer out.Close()
		command.Stdout = out
	}
	if errOut := attach.Stderr(); errOut != nil {
		defer errOut.Close()
		command.Stderr = errOut
	} else {
		command.Stderr = command.Stdout
	}
	err = command.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return utilexec.CodeExitError{Err: err, Code: exitErr.ExitCode()}
	}
	return err
}

// nsenterArgs enter a container's namespaces: with a root filesystem
// (user != nil) also its PID namespace, its root and its user.
func nsenterArgs(pid int, user *containerUser) []string {
	args := []string{"--target", strconv.Itoa(pid), "--mount", "--uts", "--net"}
	if user != nil {
		args = append(args, "--pid", "--root", "--setgid", strconv.Itoa(int(user.GID)), "--setuid", strconv.Itoa(int(user.UID)))
	}
	return append(args, "--wd", "--")
}
