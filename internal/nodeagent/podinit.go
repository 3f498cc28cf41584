package nodeagent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// podInitEnv names the environment variable that turns a re-executed copy
// of the running binary into a container's init: the node starts
// /proc/self/exe in fresh mount, UTS and PID namespaces with only this
// variable set, and init() below joins the pod's network namespace, builds
// the container's root filesystem with the volumes, /etc/hosts and
// /etc/resolv.conf in it, pivots into it, sets the host name, becomes the
// container's user and execs its entrypoint (runInRoot). With the developer
// fallback of mapped binaries there is no root filesystem: the volumes are
// bind-mounted over the node's own paths and the binary runs as the node's
// user.
// Because it is package init, it works in every binary that links this
// package: the kairo-local command and the test binaries of the end-to-end
// suites alike.
const podInitEnv = "KAIRO_LOCAL_POD_INIT"

// podInitSpec is what the node hands to the init: everything a container
// runtime would do between creating the namespaces and exec.
type podInitSpec struct {
	// NetNSFD, when non-zero, is an inherited descriptor of the pod's
	// network namespace, which the container joins.
	NetNSFD    int         `json:"netnsFD,omitempty"`
	Hostname   string      `json:"hostname"`
	Mounts     []hostMount `json:"mounts"`
	WorkingDir string      `json:"workingDir"`
	Path       string      `json:"path"`
	Args       []string    `json:"args"`
	Env        []string    `json:"env"`

	// Root is the container's root filesystem; nil for a mapped binary.
	// With a root, mount targets and WorkingDir are paths inside it and
	// Path is looked up in Env's PATH there.
	Root *containerRoot `json:"root,omitempty"`
	// User, Capabilities and NoNewPrivs apply with a Root.
	User         *containerUser `json:"user,omitempty"`
	Capabilities []string       `json:"capabilities,omitempty"`
	NoNewPrivs   bool           `json:"noNewPrivs,omitempty"`
}

func init() {
	specPath, ok := os.LookupEnv(podInitEnv)
	if !ok {
		return
	}
	err := runPodInit(specPath)
	// Only reached when exec failed; the container log shows why.
	fmt.Fprintf(os.Stderr, "kairo-local: cannot start container: %v\n", err)
	os.Exit(128)
}

func runPodInit(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec podInitSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	if spec.NetNSFD != 0 {
		// Package init runs on the main thread with the goroutine locked to
		// it, and the exec below happens from that same thread, so the
		// container starts in the namespace this thread joins.
		if err := unix.Setns(spec.NetNSFD, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("join the pod's network namespace: %w", err)
		}
		_ = unix.Close(spec.NetNSFD)
	}
	if spec.Root != nil {
		return runInRoot(spec)
	}
	// Open the binary and every source before the first mount: a volume
	// mounted on /tmp (or any other directory) would otherwise hide what
	// lives under it on the node, such as a sandbox or a binary under /tmp.
	binary, err := os.Open(spec.Path)
	if err != nil {
		return err
	}
	sources := make([]*os.File, len(spec.Mounts))
	for i, m := range spec.Mounts {
		f, err := os.OpenFile(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("mount %s: %w", m.Source, err)
		}
		sources[i] = f
	}
	for i, m := range spec.Mounts {
		if err := bindMount(m, sources[i]); err != nil {
			return err
		}
		_ = sources[i].Close()
	}
	if spec.Hostname != "" {
		if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
	}
	if spec.WorkingDir != "" {
		if err := os.MkdirAll(spec.WorkingDir, 0o755); err != nil {
			return err
		}
		if err := os.Chdir(spec.WorkingDir); err != nil {
			return err
		}
	}
	return syscall.Exec("/proc/self/fd/"+strconv.Itoa(int(binary.Fd())), spec.Args, spec.Env)
}

// bindMount mounts m.Source, opened as src, over m.Target inside this
// process's private mount namespace. A missing target is created first (on
// the shared filesystem: an empty directory or file is what a mount point
// costs here).
func bindMount(m hostMount, src *os.File) error {
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.Source, err)
	}
	if _, err := os.Lstat(m.Target); os.IsNotExist(err) {
		if info.IsDir() {
			err = os.MkdirAll(m.Target, 0o755)
		} else {
			if err = os.MkdirAll(filepath.Dir(m.Target), 0o755); err == nil {
				var f *os.File
				if f, err = os.OpenFile(m.Target, os.O_CREATE|os.O_RDONLY, 0o644); err == nil {
					err = f.Close()
				}
			}
		}
		if err != nil {
			return fmt.Errorf("create mount point %s: %w", m.Target, err)
		}
	}
	// The descriptor's /proc path names the source even where an earlier
	// mount has covered its path.
	from := "/proc/self/fd/" + strconv.Itoa(int(src.Fd()))
	if err := syscall.Mount(from, m.Target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY | syscall.MS_REC)
		if err := syscall.Mount("", m.Target, "", flags, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", m.Target, err)
		}
	}
	return nil
}
