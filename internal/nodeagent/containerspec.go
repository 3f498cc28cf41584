package nodeagent

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/kairolog/kairolog/internal/imagestore"
)

// imageSpec is what the init needs to run a container from a pulled
// image, as a container runtime derives it from the image configuration
// and the container spec: the command (command/args override the image's
// Entrypoint/Cmd as Kubernetes defines), the environment (the image's ENV
// under the container's), the working directory, the user (securityContext
// over the image's USER), the capabilities, and a root filesystem with a
// fresh writable layer for this run.
func (c *containerRuntime) imageSpec(pod *corev1.Pod, img *imagestore.Image, env map[string]string, order []string, mounts []hostMount) (podInitSpec, error) {
	pr := c.pod
	cfg := img.Config
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var argv []string
	expandAll := func(in []string) {
		for _, a := range in {
			argv = append(argv, expand(a, lookup))
		}
	}
	switch {
	case len(c.spec.Command) > 0:
		expandAll(c.spec.Command)
		expandAll(c.spec.Args)
	case len(c.spec.Args) > 0:
		argv = append(argv, cfg.Entrypoint...)
		expandAll(c.spec.Args)
	default:
		argv = append(append(argv, cfg.Entrypoint...), cfg.Cmd...)
	}
	if len(argv) == 0 {
		return podInitSpec{}, &configError{"no command specified"}
	}

	sc := effectiveSecurity(pod, &c.spec)
	if err := verifyRunAsNonRoot(pod, &c.spec, sc, cfg.User); err != nil {
		return podInitSpec{}, err
	}
	user, err := resolveUser(img.RootFS, pod, sc, cfg.User)
	if err != nil {
		return podInitSpec{}, err
	}
	caps, err := containerCapabilities(sc)
	if err != nil {
		return podInitSpec{}, err
	}

	var volumes []string
	for v := range cfg.Volumes {
		volumes = append(volumes, v)
	}
	slices.Sort(volumes)
	for _, v := range volumes {
		if mountedAt(mounts, v) {
			continue
		}
		dir, err := pr.imageVolume(c.spec.Name, v, img.RootFS)
		if err != nil {
			return podInitSpec{}, err
		}
		mounts = append(mounts, hostMount{Source: dir, Target: v})
	}

	base := filepath.Join(pr.dir, "containers", c.spec.Name)
	root := &containerRoot{
		Image: img.RootFS, Upper: filepath.Join(base, "upper"), Work: filepath.Join(base, "work"),
		Mountpoint: filepath.Join(base, "rootfs"),
		ReadOnly:   sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem,
	}
	// Every run is a new container with an empty writable layer: what the
	// last run wrote outside its volumes is gone, as on a kubelet's node.
	for _, d := range []string{root.Upper, root.Work} {
		if err := os.RemoveAll(d); err != nil {
			return podInitSpec{}, err
		}
	}
	for _, d := range []string{root.Upper, root.Work, root.Mountpoint} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return podInitSpec{}, err
		}
	}
	workDir := c.spec.WorkingDir
	if workDir == "" {
		workDir = cfg.WorkingDir
	}
	privileged := sc.Privileged != nil && *sc.Privileged
	return podInitSpec{
		Root: root, Mounts: sortMounts(mounts), WorkingDir: workDir,
		Path: argv[0], Args: argv, Env: withImageEnv(cfg.Env, env, order),
		User: &user, Capabilities: caps,
		NoNewPrivs: !privileged && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation,
	}, nil
}

// binarySpec is the developer fallback: a mapped binary of this machine
// runs over the node's own filesystem, with the volumes bind-mounted over
// it, as the node's user.
func (c *containerRuntime) binarySpec(img Image, env map[string]string, order []string, mounts []hostMount) (podInitSpec, error) {
	pr := c.pod
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	argv0 := img.Binary
	var args []string
	if len(c.spec.Command) > 0 {
		argv0 = c.spec.Command[0]
		for _, a := range c.spec.Command[1:] {
			args = append(args, expand(a, lookup))
		}
	}
	for _, a := range c.spec.Args {
		args = append(args, expand(a, lookup))
	}
	for _, v := range img.Volumes {
		if mountedAt(mounts, v) {
			continue
		}
		dir := filepath.Join(pr.dir, "image-volumes", c.spec.Name, strings.ReplaceAll(strings.Trim(v, "/"), "/", "_"))
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return podInitSpec{}, err
		}
		mounts = append(mounts, hostMount{Source: dir, Target: v})
	}
	workDir := c.spec.WorkingDir
	if workDir == "" {
		workDir = img.WorkingDir
	}
	if workDir == "" {
		// Stands in for the image's writable layer, so a relative path
		// never lands in the node's own working directory.
		workDir = filepath.Join(pr.dir, "rootfs", c.spec.Name)
	}
	return podInitSpec{
		Mounts: sortMounts(mounts), WorkingDir: workDir,
		Path: img.Binary, Args: append([]string{argv0}, args...), Env: withImageEnv(img.Env, env, order),
	}, nil
}

// imageVolume is the anonymous volume a runtime gives an image's VOLUME
// path that no volume mount covers: a directory of the pod that starts as a
// copy of what the image has there (owners and modes kept) and outlives the
// container's restarts.
func (pr *podRuntime) imageVolume(container, path, rootfs string) (string, error) {
	dir := filepath.Join(pr.dir, "image-volumes", container, strings.ReplaceAll(strings.Trim(path, "/"), "/", "_"))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp := dir + ".new"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	if err := copyImageDir(rootfs, inRoot(path), tmp); err != nil {
		return "", fmt.Errorf("image volume %s: %w", path, err)
	}
	return dir, os.Rename(tmp, dir)
}

// copyImageDir copies the directory rel of an unpacked image (read through
// an os.Root) to dst, keeping owners and modes; a missing directory gives
// an empty one.
func copyImageDir(rootfs, rel, dst string) error {
	root, err := os.OpenRoot(rootfs)
	if err != nil {
		return err
	}
	defer root.Close()
	if info, err := root.Stat(rel); err != nil || !info.IsDir() {
		return os.Mkdir(dst, 0o755)
	}
	return fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := root.Lstat(p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, strings.TrimPrefix(strings.TrimPrefix(p, rel), "/"))
		switch {
		case info.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := root.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(root, p, target); err != nil {
				return err
			}
		default:
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			if err := os.Lchown(target, int(st.Uid), int(st.Gid)); err != nil {
				return err
			}
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return os.Chmod(target, info.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		}
		return nil
	})
}

func copyFile(root *os.Root, src, dst string) error {
	in, err := root.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
