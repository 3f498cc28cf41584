package nodeagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// containerRoot is a container's root filesystem as the init assembles
// it: the image's unpacked layers, read-only and shared by every
// container of the image, under this run's own writable layer (overlayfs).
type containerRoot struct {
	Image      string `json:"image"`      // overlay lowerdir
	Upper      string `json:"upper"`      // this run's writable layer
	Work       string `json:"work"`       // overlay's work directory, beside Upper
	Mountpoint string `json:"mountpoint"` // where the root is assembled
	// ReadOnly mounts the root read-only (readOnlyRootFilesystem); volumes
	// keep their own modes.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// runInRoot is the init of a container with a root filesystem: in the
// fresh mount, UTS and PID namespaces (and the pod's network namespace),
// it mounts the root, /proc, /dev, /sys and the volumes inside it, makes it
// read-only if asked, pivots into it, sets the host name, becomes the
// container's user with its capabilities, and execs the entrypoint.
func runInRoot(spec podInitSpec) error {
	r := spec.Root
	opts := "lowerdir=" + r.Image + ",upperdir=" + r.Upper + ",workdir=" + r.Work
	if err := unix.Mount("overlay", r.Mountpoint, "overlay", unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount the root filesystem: %w", err)
	}
	root, err := os.OpenRoot(r.Mountpoint)
	if err != nil {
		return err
	}
	if err := mountSystem(root); err != nil {
		return err
	}
	for _, m := range spec.Mounts {
		if err := bindInto(root, m); err != nil {
			return err
		}
	}
	workDir := spec.WorkingDir
	if workDir == "" {
		workDir = "/"
	}
	// As runc does, a missing working directory is created (before the
	// root may turn read-only).
	if err := root.MkdirAll(inRoot(workDir), 0o755); err != nil {
		return fmt.Errorf("working directory %s: %w", workDir, err)
	}
	_ = root.Close()
	if r.ReadOnly {
		if err := unix.Mount("", r.Mountpoint, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make the root filesystem read-only: %w", err)
		}
	}
	if err := pivotInto(r.Mountpoint); err != nil {
		return err
	}
	if spec.Hostname != "" {
		if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
			return fmt.Errorf("set hostname: %w", err)
		}
	}
	program, err := lookPath(spec.Path, spec.Env)
	if err != nil {
		return err
	}
	if err := becomeUser(spec); err != nil {
		return err
	}
	if err := os.Chdir(workDir); err != nil {
		return fmt.Errorf("working directory %s: %w", workDir, err)
	}
	return syscall.Exec(program, spec.Args, spec.Env)
}

// inRoot turns an absolute container path into a path relative to the
// root, as os.Root takes it.
func inRoot(p string) string {
	rel := strings.TrimPrefix(path.Clean("/"+p), "/")
	if rel == "" {
		return "."
	}
	return rel
}

// mountPoint makes sure p exists inside root (a directory, or an empty
// file for a file mount) and returns a path naming it that the kernel
// resolves without following anything again: /proc/self/fd/N of a
// descriptor opened through root, so a link in the image cannot send a
// mount outside the root. Close the file after mounting.
func mountPoint(root *os.Root, p string, dir bool) (string, *os.File, error) {
	rel := inRoot(p)
	if dir {
		if err := root.MkdirAll(rel, 0o755); err != nil {
			return "", nil, fmt.Errorf("mount point %s: %w", p, err)
		}
	} else if _, err := root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
		if parent := path.Dir(rel); parent != "." {
			if err := root.MkdirAll(parent, 0o755); err != nil {
				return "", nil, fmt.Errorf("mount point %s: %w", p, err)
			}
		}
		f, err := root.OpenFile(rel, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", nil, fmt.Errorf("mount point %s: %w", p, err)
		}
		_ = f.Close()
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if dir {
		flags |= unix.O_DIRECTORY
	}
	f, err := root.OpenFile(rel, flags, 0)
	if err != nil {
		return "", nil, fmt.Errorf("mount point %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		_ = f.Close()
		return "", nil, fmt.Errorf("mount point %s is a symbolic link", p)
	}
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), f, nil
}

// mountSystem mounts what a container runtime gives every container: a
// /proc of the container's PID namespace, a /dev with the usual character
// devices, and /sys read-only.
func mountSystem(root *os.Root) error {
	type fsMount struct {
		target, fstype, data string
		flags                uintptr
	}
	for _, m := range []fsMount{
		{"/proc", "proc", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"/dev", "tmpfs", "mode=755,size=65536k", unix.MS_NOSUID | unix.MS_STRICTATIME},
		{"/dev/shm", "tmpfs", "mode=1777,size=65536k", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"/sys", "sysfs", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_RDONLY},
	} {
		target, f, err := mountPoint(root, m.target, true)
		if err != nil {
			return err
		}
		err = unix.Mount(m.fstype, target, m.fstype, m.flags, m.data)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	for _, dev := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := bindInto(root, hostMount{Source: "/dev/" + dev, Target: "/dev/" + dev}); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := root.Symlink(target, "dev/"+name); err != nil {
			return err
		}
	}
	return nil
}

// bindInto bind-mounts m.Source (a path of the node) on m.Target inside
// root, read-only if m says so.
func bindInto(root *os.Root, m hostMount) error {
	src, err := os.OpenFile(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.Source, err)
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return fmt.Errorf("mount %s: %w", m.Source, err)
	}
	target, f, err := mountPoint(root, m.Target, info.IsDir())
	if err != nil {
		return err
	}
	defer f.Close()
	from := "/proc/self/fd/" + strconv.Itoa(int(src.Fd()))
	if err := unix.Mount(from, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s on %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		// The descriptor above names the directory under the new mount;
		// the remount needs the mount itself.
		mounted, mf, err := mountPoint(root, m.Target, info.IsDir())
		if err != nil {
			return err
		}
		defer mf.Close()
		if err := unix.Mount("", mounted, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("remount %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// pivotInto makes dir the root of this mount namespace and detaches the
// node's filesystem from it, as runc does (pivot_root(".", ".")).
func pivotInto(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into %s: %w", dir, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the node's root: %w", err)
	}
	return unix.Chdir("/")
}

// lookPath finds the entrypoint in the container's PATH, inside its root,
// as runc does.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathEnv := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// becomeUser switches to the container's user and groups and limits its
// capabilities: the bounding set keeps only the container's (so nothing
// it execs can gain more), a root user gets exactly those, a non-root one
// none; allowPrivilegeEscalation: false sets no_new_privs. Everything
// happens on this thread, which the exec replaces the process with.
func becomeUser(spec podInitSpec) error {
	keep := map[int]bool{}
	for _, c := range spec.Capabilities {
		keep[capabilityNumbers[c]] = true
	}
	last := unix.CAP_LAST_CAP
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if !keep[c] {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				return fmt.Errorf("drop capability %d: %w", c, err)
			}
		}
	}
	u := spec.User
	groups := make([]int, len(u.Groups))
	for i, g := range u.Groups {
		groups[i] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("set groups %v: %w", u.Groups, err)
	}
	if err := syscall.Setgid(int(u.GID)); err != nil {
		return fmt.Errorf("set gid %d: %w", u.GID, err)
	}
	if err := syscall.Setuid(int(u.UID)); err != nil {
		return fmt.Errorf("set uid %d: %w", u.UID, err)
	}
	if u.UID == 0 {
		// Root keeps exactly the container's capabilities across exec.
		var set [2]uint32
		for c := range keep {
			set[c/32] |= 1 << (c % 32)
		}
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		data := [2]unix.CapUserData{
			{Effective: set[0], Permitted: set[0], Inheritable: set[0]},
			{Effective: set[1], Permitted: set[1], Inheritable: set[1]},
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("set capabilities: %w", err)
		}
	}
	if spec.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %w", err)
		}
	}
	return nil
}
