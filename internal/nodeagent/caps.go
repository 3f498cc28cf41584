package nodeagent

import (
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

// defaultCapabilities are what containerd gives a container that adds and
// drops nothing.
var defaultCapabilities = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// capabilityNumbers are Linux's capability numbers by name.
var capabilityNumbers = map[string]int{
	"CAP_CHOWN": unix.CAP_CHOWN, "CAP_DAC_OVERRIDE": unix.CAP_DAC_OVERRIDE, "CAP_DAC_READ_SEARCH": unix.CAP_DAC_READ_SEARCH,
	"CAP_FOWNER": unix.CAP_FOWNER, "CAP_FSETID": unix.CAP_FSETID, "CAP_KILL": unix.CAP_KILL, "CAP_SETGID": unix.CAP_SETGID,
	"CAP_SETUID": unix.CAP_SETUID, "CAP_SETPCAP": unix.CAP_SETPCAP, "CAP_LINUX_IMMUTABLE": unix.CAP_LINUX_IMMUTABLE,
	"CAP_NET_BIND_SERVICE": unix.CAP_NET_BIND_SERVICE, "CAP_NET_BROADCAST": unix.CAP_NET_BROADCAST,
	"CAP_NET_ADMIN": unix.CAP_NET_ADMIN, "CAP_NET_RAW": unix.CAP_NET_RAW, "CAP_IPC_LOCK": unix.CAP_IPC_LOCK,
	"CAP_IPC_OWNER": unix.CAP_IPC_OWNER, "CAP_SYS_MODULE": unix.CAP_SYS_MODULE, "CAP_SYS_RAWIO": unix.CAP_SYS_RAWIO,
	"CAP_SYS_CHROOT": unix.CAP_SYS_CHROOT, "CAP_SYS_PTRACE": unix.CAP_SYS_PTRACE, "CAP_SYS_PACCT": unix.CAP_SYS_PACCT,
	"CAP_SYS_ADMIN": unix.CAP_SYS_ADMIN, "CAP_SYS_BOOT": unix.CAP_SYS_BOOT, "CAP_SYS_NICE": unix.CAP_SYS_NICE,
	"CAP_SYS_RESOURCE": unix.CAP_SYS_RESOURCE, "CAP_SYS_TIME": unix.CAP_SYS_TIME, "CAP_SYS_TTY_CONFIG": unix.CAP_SYS_TTY_CONFIG,
	"CAP_MKNOD": unix.CAP_MKNOD, "CAP_LEASE": unix.CAP_LEASE, "CAP_AUDIT_WRITE": unix.CAP_AUDIT_WRITE,
	"CAP_AUDIT_CONTROL": unix.CAP_AUDIT_CONTROL, "CAP_SETFCAP": unix.CAP_SETFCAP, "CAP_MAC_OVERRIDE": unix.CAP_MAC_OVERRIDE,
	"CAP_MAC_ADMIN": unix.CAP_MAC_ADMIN, "CAP_SYSLOG": unix.CAP_SYSLOG, "CAP_WAKE_ALARM": unix.CAP_WAKE_ALARM,
	"CAP_BLOCK_SUSPEND": unix.CAP_BLOCK_SUSPEND, "CAP_AUDIT_READ": unix.CAP_AUDIT_READ, "CAP_PERFMON": unix.CAP_PERFMON,
	"CAP_BPF": unix.CAP_BPF, "CAP_CHECKPOINT_RESTORE": unix.CAP_CHECKPOINT_RESTORE,
}

// containerCapabilities is the capability set a container keeps, as
// containerd computes it: privileged gets all; otherwise the defaults plus
// add minus drop, where dropping ALL keeps only what is added.
func containerCapabilities(sc corev1.SecurityContext) ([]string, error) {
	all := make([]string, 0, len(capabilityNumbers))
	for name := range capabilityNumbers {
		all = append(all, name)
	}
	slices.Sort(all)
	if sc.Privileged != nil && *sc.Privileged {
		return all, nil
	}
	var add, drop []string
	if c := sc.Capabilities; c != nil {
		for _, a := range c.Add {
			add = append(add, capName(a))
		}
		for _, d := range c.Drop {
			drop = append(drop, capName(d))
		}
	}
	for _, n := range append(slices.Clone(add), drop...) {
		if _, ok := capabilityNumbers[n]; !ok && n != "CAP_ALL" {
			return nil, &configError{fmt.Sprintf("unknown capability %q", strings.TrimPrefix(n, "CAP_"))}
		}
	}
	var keep []string
	switch {
	case slices.Contains(add, "CAP_ALL"):
		keep = all
	case slices.Contains(drop, "CAP_ALL"):
		keep = add
	default:
		keep = append(slices.Clone(defaultCapabilities), add...)
	}
	keep = slices.DeleteFunc(slices.Clone(keep), func(n string) bool { return slices.Contains(drop, n) && !slices.Contains(add, n) })
	slices.Sort(keep)
	return slices.Compact(keep), nil
}

// capName spells a capability as Linux does: "net_admin" → "CAP_NET_ADMIN".
func capName(c corev1.Capability) string {
	n := strings.ToUpper(string(c))
	if !strings.HasPrefix(n, "CAP_") {
		n = "CAP_" + n
	}
	return n
}
