package nodeagent

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// containerUser is who a container's process runs as.
type containerUser struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// configError is a container configuration the node refuses before
// starting anything; the kubelet reports it as CreateContainerConfigError.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// effectiveSecurity merges the pod's security context into the
// container's, the container's fields winning, as the kubelet does.
func effectiveSecurity(pod *corev1.Pod, c *corev1.Container) corev1.SecurityContext {
	var sc corev1.SecurityContext
	if c.SecurityContext != nil {
		sc = *c.SecurityContext
	}
	if p := pod.Spec.SecurityContext; p != nil {
		if sc.RunAsUser == nil {
			sc.RunAsUser = p.RunAsUser
		}
		if sc.RunAsGroup == nil {
			sc.RunAsGroup = p.RunAsGroup
		}
		if sc.RunAsNonRoot == nil {
			sc.RunAsNonRoot = p.RunAsNonRoot
		}
	}
	return sc
}

// formatPod names a pod in messages as the kubelet does: name_ns(uid).
func formatPod(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// verifyRunAsNonRoot refuses a container that asks to run as non-root but
// would run as root, with the kubelet's messages.
func verifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, sc corev1.SecurityContext, imageUser string) error {
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return &configError{fmt.Sprintf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", formatPod(pod), c.Name)}
		}
		return nil
	}
	user, _, _ := strings.Cut(imageUser, ":")
	if user == "" {
		user = "0"
	}
	uid, err := strconv.ParseUint(user, 10, 32)
	if err != nil {
		return &configError{fmt.Sprintf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", user, formatPod(pod), c.Name)}
	}
	if uid == 0 {
		return &configError{fmt.Sprintf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", formatPod(pod), c.Name)}
	}
	return nil
}

// resolveUser finds the uid, gid and groups of a container from the
// image's USER and /etc/passwd and /etc/group (read inside root), the
// security context's runAsUser, runAsGroup and supplementalGroups, and the
// pod's fsGroup, as runc and the kubelet do together.
func resolveUser(root string, pod *corev1.Pod, sc corev1.SecurityContext, imageUser string) (containerUser, error) {
	passwd, group := readIDFile(root, "etc/passwd"), readIDFile(root, "etc/group")
	userPart, groupPart, hasGroup := strings.Cut(imageUser, ":")
	var u containerUser
	name := ""
	switch {
	case sc.RunAsUser != nil:
		u.UID = uint32(*sc.RunAsUser)
		if e, ok := passwd.byID(u.UID); ok {
			name, u.GID = e.name, e.gid
		}
	case userPart == "":
		if e, ok := passwd.byID(0); ok {
			name, u.GID = e.name, e.gid
		}
	default:
		if id, err := strconv.ParseUint(userPart, 10, 32); err == nil {
			u.UID = uint32(id)
			if e, ok := passwd.byID(u.UID); ok {
				name, u.GID = e.name, e.gid
			}
		} else {
			e, ok := passwd.byName(userPart)
			if !ok {
				return u, &configError{fmt.Sprintf("unable to find user %s: no matching entries in passwd file", userPart)}
			}
			name, u.UID, u.GID = e.name, e.id, e.gid
		}
	}
	switch {
	case sc.RunAsGroup != nil:
		u.GID = uint32(*sc.RunAsGroup)
	case hasGroup && sc.RunAsUser == nil:
		if id, err := strconv.ParseUint(groupPart, 10, 32); err == nil {
			u.GID = uint32(id)
		} else if e, ok := group.byName(groupPart); ok {
			u.GID = e.id
		} else {
			return u, &configError{fmt.Sprintf("unable to find group %s: no matching entries in group file", groupPart)}
		}
	}
	add := func(gid uint32) {
		if !slices.Contains(u.Groups, gid) {
			u.Groups = append(u.Groups, gid)
		}
	}
	if name != "" {
		for _, g := range group {
			if slices.Contains(g.members, name) {
				add(g.id)
			}
		}
	}
	if p := pod.Spec.SecurityContext; p != nil {
		for _, g := range p.SupplementalGroups {
			add(uint32(g))
		}
		if p.FSGroup != nil {
			add(uint32(*p.FSGroup))
		}
	}
	return u, nil
}

// idEntry is one line of /etc/passwd or /etc/group.
type idEntry struct {
	name    string
	id, gid uint32
	members []string
}

type idFile []idEntry

// readIDFile parses /etc/passwd or /etc/group of an image, opened through
// an os.Root so a link in the image cannot point it at the node's.
func readIDFile(root, name string) idFile {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	data, err := r.ReadFile(name)
	if err != nil {
		return nil
	}
	var out idFile
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		id, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil {
			continue
		}
		e := idEntry{name: f[0], id: uint32(id)}
		if len(f) >= 4 {
			if gid, err := strconv.ParseUint(f[3], 10, 32); err == nil {
				e.gid = uint32(gid) // passwd: the primary group
			} else if f[3] != "" {
				e.members = strings.Split(f[3], ",") // group: the members
			}
		}
		out = append(out, e)
	}
	return out
}

func (f idFile) byID(id uint32) (idEntry, bool) {
	for _, e := range f {
		if e.id == id {
			return e, true
		}
	}
	return idEntry{}, false
}

func (f idFile) byName(name string) (idEntry, bool) {
	for _, e := range f {
		if e.name == name {
			return e, true
		}
	}
	return idEntry{}, false
}
