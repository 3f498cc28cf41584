package nodeagent

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// Group permission bits the kubelet adds for an fsGroup
// (pkg/volume/volume_linux.go).
const (
	rwMask   = fs.FileMode(0o660)
	roMask   = fs.FileMode(0o440)
	execMask = fs.FileMode(0o110)
)

// setVolumeOwnership gives a volume to the pod's fsGroup as the kubelet
// does for the volume types that support it (emptyDir, configMap, secret,
// downwardAPI, projected and local persistent volumes; not hostPath):
// every file's group becomes fsGroup with group read (and write, unless
// the volume is read-only) added, and directories get the set-group-ID bit
// so new files inherit the group. With OnRootMismatch the walk is skipped
// when the volume's root already has that group and those bits, so a file
// inside with another owner stays as it is, exactly as on a real node.
func setVolumeOwnership(dir string, fsGroup *int64, policy *corev1.PodFSGroupChangePolicy, readOnly bool) error {
	if fsGroup == nil {
		return nil
	}
	if policy != nil && *policy == corev1.FSGroupChangeOnRootMismatch && !requiresPermissionChange(dir, *fsGroup, readOnly) {
		return nil
	}
	return filepath.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(*fsGroup)); err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		mask := rwMask
		if readOnly {
			mask = roMask
		}
		mode := info.Mode()
		if info.IsDir() {
			mask |= fs.ModeSetgid | execMask
		}
		return os.Chmod(path, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)|mask)
	})
}

// requiresPermissionChange is the kubelet's OnRootMismatch test: the root
// directory's group, set-group-ID bit and group permissions.
func requiresPermissionChange(dir string, fsGroup int64, readOnly bool) bool {
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return true
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int64(st.Gid) != fsGroup {
		return true
	}
	want := rwMask
	if readOnly {
		want = roMask
	}
	if info.Mode()&fs.ModeSetgid == 0 {
		return true
	}
	return info.Mode().Perm()&want != want
}

// podFSGroup returns the pod's fsGroup and its change policy.
func podFSGroup(pod *corev1.Pod) (*int64, *corev1.PodFSGroupChangePolicy) {
	if sc := pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup, sc.FSGroupChangePolicy
	}
	return nil, nil
}
