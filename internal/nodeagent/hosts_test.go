package nodeagent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func stsPod(name, ns, ip string, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "kairo"}},
		Spec: corev1.PodSpec{Hostname: name, Subdomain: "kairo-headless",
			Containers: []corev1.Container{{Name: "broker", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func hostsTestServices(publishNotReady bool) []*corev1.Service {
	sel := map[string]string{"app": "kairo"}
	return []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "kairo-headless", Namespace: "team"},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: sel, PublishNotReadyAddresses: publishNotReady}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kairo", Namespace: "team"},
			Spec: corev1.ServiceSpec{ClusterIP: "127.1.20.30", Selector: sel}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: "127.1.20.1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "external", Namespace: "team"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}},
	}
}

// lookup returns the addresses a hosts file gives name.
func lookup(hosts, name string) []string {
	var out []string
	for _, line := range strings.Split(hosts, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, n := range fields[1:] {
			if n == name {
				out = append(out, fields[0])
			}
		}
	}
	return out
}

func TestRenderHosts(t *testing.T) {
	self := stsPod("kairo-0", "team", "127.0.20.2", true)
	pods := []*corev1.Pod{self, stsPod("kairo-1", "team", "127.0.20.3", false), stsPod("kairo-2", "team", "127.0.20.4", true)}
	hosts := string(renderHosts(self, self.Status.PodIP, pods, hostsTestServices(true), "cluster.local"))

	for name, want := range map[string]string{
		"kairo-0": "127.0.20.2", // its own host name, as the kubelet writes it
		"kairo-1.kairo-headless.team.svc.cluster.local": "127.0.20.3",
		"kairo-1.kairo-headless.team.svc":               "127.0.20.3",
		"kairo-1.kairo-headless":                        "127.0.20.3", // same-namespace short form
		"kairo.team.svc.cluster.local":                  "127.1.20.30",
		"kairo":                                         "127.1.20.30",
		"kubernetes.default.svc":                        "127.1.20.1",
		"localhost":                                     "127.0.0.1",
	} {
		if got := lookup(hosts, name); len(got) == 0 || got[0] != want {
			t.Errorf("%s → %v, want %s\n%s", name, got, want, hosts)
		}
	}
	if got := lookup(hosts, "kairo-headless.team.svc.cluster.local"); len(got) != 3 {
		t.Errorf("headless service name → %v, want all three pods (publishNotReadyAddresses)", got)
	}
	if got := lookup(hosts, "kubernetes"); len(got) != 0 {
		t.Errorf("short name of another namespace's Service resolves: %v", got)
	}
	if strings.Contains(hosts, "external") {
		t.Error("an ExternalName Service has no address to put in a hosts file")
	}

	// Without publishNotReadyAddresses, a not-ready pod has no name yet.
	hosts = string(renderHosts(self, self.Status.PodIP, pods, hostsTestServices(false), "cluster.local"))
	if got := lookup(hosts, "kairo-1.kairo-headless.team.svc.cluster.local"); len(got) != 0 {
		t.Errorf("not-ready pod resolves: %v", got)
	}
	if got := lookup(hosts, "kairo-headless"); len(got) != 2 {
		t.Errorf("headless name → %v, want the two ready pods", got)
	}

	// From another namespace only the qualified forms work.
	other := stsPod("client", "apps", "127.0.20.9", true)
	other.Spec.Hostname, other.Spec.Subdomain = "", ""
	hosts = string(renderHosts(other, other.Status.PodIP, pods, hostsTestServices(true), "cluster.local"))
	if len(lookup(hosts, "kairo")) != 0 || len(lookup(hosts, "kairo.team")) != 1 || len(lookup(hosts, "client")) != 1 {
		t.Errorf("namespace-relative names are wrong for a pod in another namespace:\n%s", hosts)
	}
}

func TestRewriteInPlaceKeepsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	if _, err := rewriteInPlace(path, []byte("a much longer first version\n")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	changed, err := rewriteInPlace(path, []byte("short\n"))
	if err != nil || !changed {
		t.Fatalf("rewrite: changed=%v err=%v", changed, err)
	}
	after, _ := os.Stat(path)
	if before.Sys().(*syscall.Stat_t).Ino != after.Sys().(*syscall.Stat_t).Ino {
		t.Error("the file was replaced; pods that bind-mount it would not see the change")
	}
	if b, _ := os.ReadFile(path); string(b) != "short\n" {
		t.Errorf("content = %q", b)
	}
	if changed, _ := rewriteInPlace(path, []byte("short\n")); changed {
		t.Error("identical content rewritten")
	}
}
