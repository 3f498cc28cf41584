package nodeagent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// claimedPod is the fixture with a local persistent volume mounted where
// the operator mounts a broker's claim, and the operator's security
// context. The volume's root is returned: a fresh disk's root, 0755 root.
func claimedPod(t *testing.T, name string, src *fakeSource) (*corev1.Pod, string) {
	t.Helper()
	disk := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	src.claims["team/data-"+name] = &corev1.PersistentVolumeClaim{
		Spec:   corev1.PersistentVolumeClaimSpec{VolumeName: "pv-" + name},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	src.volumes["pv-"+name] = &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: disk}}}}
	pod := fixturePod(name, corev1.RestartPolicyAlways)
	pod.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}}}
	c := &pod.Spec.Containers[0]
	c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kairolog"}}
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532),
		FSGroup: ptr.To[int64](65532), FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeOnRootMismatch),
		SupplementalGroups: []int64{2000},
	}
	c.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return pod, disk
}

// TestOperatorSecurityContext runs the fixture as the operator runs
// brokers: non-root user 65532 writing its claim through fsGroup, a
// read-only root filesystem, no capabilities, no_new_privs.
func TestOperatorSecurityContext(t *testing.T) {
	t.Parallel()
	src := newFakeSource()
	pod, disk := claimedPod(t, "kairo-0", src)
	tp := startPod(t, pod, src)
	tp.waitListening()

	for path, want := range map[string]string{
		"/id":                                  "uid=65532 gid=65532 groups=[2000 65532]",
		"/write?path=/etc/evil":                "read-only file system",
		"/write?path=/var/lib/kairolog/data/x": "",
		"/write?path=/tmp/x":                   "read-only file system", // no /tmp volume in this pod
	} {
		if got, err := get(tp.url(path)); err != nil || !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("GET %s = %q, %v; want %q", path, got, err, want)
		}
	}
	status, err := get(tp.url("/status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(status, want) {
			t.Errorf("/proc/self/status lacks %q:\n%s", want, status)
		}
	}
	// The claim's root now belongs to the fsGroup, set-group-ID, and what
	// the broker wrote is its own.
	info, err := os.Stat(disk)
	if err != nil {
		t.Fatal(err)
	}
	if st := info.Sys().(*syscall.Stat_t); st.Gid != 65532 || info.Mode()&os.ModeSetgid == 0 || info.Mode().Perm()&0o070 != 0o070 {
		t.Errorf("claim root: %s gid %d; want setgid, group rwx, gid 65532", info.Mode(), st.Gid)
	}
	written, err := os.Stat(filepath.Join(disk, "data", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if st := written.Sys().(*syscall.Stat_t); st.Uid != 65532 || st.Gid != 65532 {
		t.Errorf("a file the container wrote is owned by %d:%d", st.Uid, st.Gid)
	}
}

// TestWrongFSGroup: without an fsGroup a non-root container cannot write
// its claim and crash-loops, and with OnRootMismatch a file of another
// owner inside a root that already matches stays unwritable; both as on a
// kubelet's node.
func TestWrongFSGroup(t *testing.T) {
	t.Parallel()
	t.Run("no fsGroup", func(t *testing.T) {
		t.Parallel()
		src := newFakeSource()
		pod, _ := claimedPod(t, "kairo-0", src)
		pod.Spec.SecurityContext.FSGroup = nil
		tp := startPod(t, pod, src)
		p := tp.wait("the container to fail", func(p *corev1.Pod) bool {
			term := containerStatus(p).LastTerminationState.Terminated
			return term != nil && term.ExitCode == 1
		})
		if term := containerStatus(p).LastTerminationState.Terminated; term.Reason != "Error" {
			t.Errorf("termination %+v", term)
		}
		first, _ := os.ReadFile(filepath.Join(tp.pr.dir, "logs", "broker", "0.log"))
		if !strings.Contains(string(first), "mkdir /var/lib/kairolog/data: permission denied") {
			t.Errorf("first run's log:\n%s", first)
		}
	})
	for _, tc := range []struct {
		policy corev1.PodFSGroupChangePolicy
		want   string
	}{
		{corev1.FSGroupChangeOnRootMismatch, "permission denied"},
		{corev1.FSGroupChangeAlways, ""},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			src := newFakeSource()
			pod, disk := claimedPod(t, "kairo-0", src)
			pod.Spec.SecurityContext.FSGroupChangePolicy = ptr.To(tc.policy)
			// A claim whose root matches already, holding a file that
			// another user left behind.
			if err := os.MkdirAll(filepath.Join(disk, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{disk, filepath.Join(disk, "data")} {
				if err := os.Chown(d, 0, 65532); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(d, os.ModeSetgid|0o775); err != nil {
					t.Fatal(err)
				}
			}
			old := filepath.Join(disk, "data", "old")
			if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			tp := startPod(t, pod, src)
			tp.waitListening()
			got, err := get(tp.url("/write?path=/var/lib/kairolog/data/old"))
			if err != nil || !strings.Contains(got, tc.want) || (tc.want == "" && got != "") {
				t.Errorf("writing a file of another owner with %s: %q, %v; want %q", tc.policy, got, err, tc.want)
			}
		})
	}
}

// TestRunAsNonRoot: a container that must not run as root but would is
// not started: it waits in CreateContainerConfigError with the kubelet's
// message.
func TestRunAsNonRoot(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	reg, err := startTestRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.close()
	img, err := fixtureImage()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.User = "" // root
	rootImg, err := mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	reg.push(t, "kairolog/broker:root", rootImg)
	reg.push(t, "kairolog/broker:test", img)
	store := storeFor(t, reg)
	for _, tc := range []struct {
		name, image string
		runAsUser   *int64
		want        string
	}{
		{"runAsUser 0", "kairolog/broker:test", ptr.To[int64](0), "container's runAsUser breaks non-root policy"},
		{"image user root", "kairolog/broker:root", nil, "container has runAsNonRoot and image will run as root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := fixturePod("kairo-0", corev1.RestartPolicyAlways)
			pod.Spec.Containers[0].Image = tc.image
			pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: tc.runAsUser}
			tp := startPodWith(t, pod, nil, store)
			p := tp.wait("CreateContainerConfigError", waitingIn("CreateContainerConfigError"))
			msg := containerStatus(p).State.Waiting.Message
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "container: broker") {
				t.Errorf("message %q, want %q", msg, tc.want)
			}
			if !tp.events.has("Warning Failed Error: " + tc.want) {
				t.Errorf("events: %v", tp.events.events)
			}
			if cs := containerStatus(p); cs.RestartCount != 0 || cs.LastTerminationState.Terminated != nil {
				t.Errorf("the container ran: %+v", cs)
			}
		})
	}
}

// TestRootContainerCapabilities: a root container keeps containerd's
// default capabilities, minus what it drops.
func TestRootContainerCapabilities(t *testing.T) {
	t.Parallel()
	pod := fixturePod("kairo-0", corev1.RestartPolicyAlways)
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](0)}
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}}
	tp := startPod(t, pod, nil)
	tp.waitListening()
	status, err := get(tp.url("/status"))
	if err != nil {
		t.Fatal(err)
	}
	// containerd's defaults (0xa80425fb) without CAP_NET_RAW (bit 13).
	for _, want := range []string{"CapEff:\t00000000a80405fb", "CapBnd:\t00000000a80405fb", "NoNewPrivs:\t0"} {
		if !strings.Contains(status, want) {
			t.Errorf("/proc/self/status lacks %q:\n%s", want, status)
		}
	}
	if got, _ := get(tp.url("/id")); !strings.HasPrefix(got, "uid=0 gid=0") {
		t.Errorf("/id = %q", got)
	}
}
