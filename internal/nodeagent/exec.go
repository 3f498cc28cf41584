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
// the command runs in the container's mount, UTS and network namespaces (so
// it sees the pod's volumes, /etc/hosts, host name and network) with the container's
// environment and working directory. A command naming one of the image's
// tools runs that tool; anything else runs from the node. There is no
// terminal: -t gets plain pipes.
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
	proc, img, env := c.proc, c.image, c.env
	pr.mu.Unlock()
	if proc == nil {
		return errdefs.InvalidInputf("container %s in pod %s is not running", container, pod)
	}
	argv := append([]string{}, cmd...)
	if tool, ok := img.Tools[filepath.Base(argv[0])]; ok {
		argv[0] = tool
	}
	args := append([]string{"--target", strconv.Itoa(proc.Pid()), "--mount", "--uts", "--net", "--wd", "--"}, argv...)
	command := exec.CommandContext(ctx, "nsenter", args...)
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
