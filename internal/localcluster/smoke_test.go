package localcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/utils/ptr"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kairolog/kairolog/internal/imagebuild"
)

// smokeBrokerEnv switches the smoke test from the test fixture to a real
// broker binary: KAIRO_LOCAL_SMOKE_BROKER=bin/broker go test ./internal/localcluster/
const smokeBrokerEnv = "KAIRO_LOCAL_SMOKE_BROKER"

// workload is what the smoke test's StatefulSet runs as the
// kairolog/broker image, and how the test stores data in it before the kill
// and finds it again after the restart.
type workload struct {
	binary string
	args   []string
	write  func(base string) error
	check  func(base string) error
}

// fixtureWorkload runs internal/nodeagent/testdata/fixture, which counts its
// starts in its data directory.
func fixtureWorkload(binary string) workload {
	return workload{
		binary: binary,
		args:   []string{"--listen=:8080", "--data-dir=/var/lib/kairolog/data"},
		write:  func(string) error { return nil }, // the start counter is the data
		check: func(base string) error {
			body, err := httpGet(base + "/starts")
			if err != nil {
				return err
			}
			if strings.TrimSpace(body) != "2" {
				return fmt.Errorf("restarted fixture counted %q starts, want 2 (its data directory was not kept)", body)
			}
			return nil
		},
	}
}

// brokerWorkload runs the real broker: a record produced before the kill
// must be fetched after the restart.
func brokerWorkload(binary string) workload {
	const topic = "smoke"
	return workload{
		binary: binary,
		// As controllers/resources/statefulset.go runs it: every interface
		// of the pod, the same ports in every pod.
		args: []string{"--listen=:8080", "--raft-listen=:9093", "--data-dir=/var/lib/kairolog/data"},
		write: func(base string) error {
			if _, err := httpPost(base+"/topics", fmt.Sprintf(`{"name":%q,"partitions":1}`, topic)); err != nil {
				return err
			}
			_, err := httpPost(base+"/produce", fmt.Sprintf(`{"topic":%q,"partition":0,"message":"before-kill"}`, topic))
			return err
		},
		check: func(base string) error {
			body, err := httpGet(base + "/fetch?topic=" + topic + "&partition=0&offset=0")
			if err != nil {
				return err
			}
			if !strings.Contains(body, "before-kill") {
				return fmt.Errorf("record produced before the kill is gone: %s", body)
			}
			return nil
		},
	}
}

// TestSmoke starts a whole local cluster, runs a StatefulSet of two
// "broker" pods with PVCs, both listening on :8080 in their own network
// namespaces, kills one pod's process and expects the node to restart it
// with its data. On the way it checks what the end-to-end suites and the
// demo rely on: logs, exec and port-forward through kube-apiserver (which
// reaches localhost inside the pod, so a process bound only to its pod IP
// cannot be forwarded to), Endpoints, Services and peer names.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the local node runs containers in mount namespaces and needs root")
	}
	repo, err := FindRepoDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(repo, "bin", "k8s", b)); err != nil {
			t.Fatalf("%v: run hack/build-k8s-binaries.sh first (or go test -short to skip)", err)
		}
	}
	fixture := buildFixture(t, repo)
	w := fixtureWorkload(fixture)
	if b := os.Getenv(smokeBrokerEnv); b != "" {
		if !filepath.IsAbs(b) {
			b = filepath.Join(repo, b)
		}
		w = brokerWorkload(b)
	}

	// A development server on *:8080, as on many a developer's machine:
	// the pods and the Services on port 8080 must not need that port here.
	if l, err := net.Listen("tcp", ":8080"); err == nil {
		defer l.Close()
	} else {
		t.Logf("port 8080 is held already: %s", PortHolder(8080))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	cluster, err := Start(ctx, Options{
		StateDir:    t.TempDir(),
		RepoDir:     repo,
		ImageLayout: smokeImages(t, fixture, w.binary),
		Progress:    testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Stop)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("cluster logs in %s", cluster.LogDir())
			t.Logf("node log tail:\n%s", tailFile(filepath.Join(cluster.LogDir(), "node.log"), 30))
		}
	})
	t.Logf("cluster started in %s", time.Since(began).Round(100*time.Millisecond))
	if _, err := os.Stat(cluster.Kubeconfig()); err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	cfg := cluster.RESTConfig()
	client := kubernetes.NewForConfigOrDie(cfg)

	const ns = "default"
	if err := createBrokers(ctx, client, ns, w.args); err != nil {
		t.Fatal(err)
	}
	if err := createPodIPOnly(ctx, client, ns); err != nil {
		t.Fatal(err)
	}
	if err := createHostNetwork(ctx, client, ns); err != nil {
		t.Fatal(err)
	}
	pods := waitReady(ctx, t, client, ns, "kairo-0", "kairo-1", "pod-ip-only", "host-network")
	t.Logf("pods ready %s after start", time.Since(began).Round(100*time.Millisecond))
	node, err := client.CoreV1().Nodes().Get(ctx, cluster.NodeName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, podCIDR, err := net.ParseCIDR(node.Spec.PodCIDR)
	if err != nil {
		t.Fatalf("node podCIDR %q: %v", node.Spec.PodCIDR, err)
	}
	for _, p := range pods[:3] {
		ip := net.ParseIP(p.Status.PodIP)
		if ip == nil || ip.IsLoopback() || !podCIDR.Contains(ip) || p.Status.PodIP == p.Status.HostIP {
			t.Errorf("pod %s has IP %q, want one of the node's pod range %s", p.Name, p.Status.PodIP, podCIDR)
		}
	}
	if pods[0].Status.PodIP == pods[1].Status.PodIP {
		t.Fatalf("both pods got %s", pods[0].Status.PodIP)
	}
	// Pulled from the cluster's registry: the imageID is the digest.
	for _, p := range pods[:2] {
		if id := p.Status.ContainerStatuses[0].ImageID; !strings.HasPrefix(id, "docker.io/kairolog/broker@sha256:") {
			t.Errorf("pod %s runs image ID %q, want a digest of docker.io/kairolog/broker", p.Name, id)
		}
	}

	t.Run("port-forward", func(t *testing.T) {
		// Both brokers listen on :8080; each has its own.
		for _, p := range pods[:2] {
			if _, err := httpGet("http://" + net.JoinHostPort(p.Status.PodIP, "8080") + "/health"); err != nil {
				t.Errorf("%s from the node: %v", p.Name, err)
			}
		}
		local := portForward(t, cfg, ns, "kairo-1", 8080)
		if _, err := httpGet("http://" + local + "/health"); err != nil {
			t.Fatalf("health through port-forward: %v", err)
		}
		if os.Getenv(smokeBrokerEnv) != "" {
			if _, err := httpPost("http://"+local+"/topics", `{"name":"forwarded","partitions":1}`); err != nil {
				t.Fatal(err)
			}
			if _, err := httpPost("http://"+local+"/produce", `{"topic":"forwarded","partition":0,"message":"through port-forward"}`); err != nil {
				t.Fatal(err)
			}
			body, err := httpGet("http://" + local + "/fetch?topic=forwarded&partition=0&offset=0")
			if err != nil || !strings.Contains(body, "through port-forward") {
				t.Fatalf("fetch through port-forward: %s %v", body, err)
			}
		}
		// A process bound only to its pod IP is healthy (probes reach the
		// pod IP from the node) but port-forward, which dials localhost
		// inside the pod, cannot reach it: as on a real cluster.
		local = portForward(t, cfg, ns, "pod-ip-only", 8080)
		if body, err := httpGet("http://" + local + "/health"); err == nil {
			t.Errorf("port-forward reached a process bound only to its pod IP: %q", body)
		}
	})
	t.Run("endpoints", func(t *testing.T) {
		// kube-controller-manager publishes the pod addresses, and
		// kube-apiserver its own.
		waitFor(ctx, t, "EndpointSlices of kairo-headless with both pods", func() bool {
			slices, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kairo-headless"})
			if err != nil {
				return false
			}
			found := map[string]bool{}
			for _, sl := range slices.Items {
				for _, ep := range sl.Endpoints {
					for _, a := range ep.Addresses {
						found[a] = true
					}
				}
			}
			return found[pods[0].Status.PodIP] && found[pods[1].Status.PodIP]
		})
		eps, err := client.CoreV1().Endpoints(ns).Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil || len(eps.Subsets) == 0 || len(eps.Subsets[0].Addresses) == 0 || eps.Subsets[0].Addresses[0].IP != pods[0].Status.HostIP {
			t.Errorf("kubernetes Endpoints = %+v, %v; want the node address %s", eps, err, pods[0].Status.HostIP)
		}
	})
	t.Run("service from the node", func(t *testing.T) {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kairo", Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": "kairolog-smoke"},
				Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromString("http")}}},
		}
		created, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(ctx, t, "the ClusterIP to answer from the node", func() bool {
			_, err := httpGet("http://" + net.JoinHostPort(created.Spec.ClusterIP, "8080") + "/health")
			return err == nil
		})
	})
	t.Run("exec", func(t *testing.T) {
		exec := func(pod, container string) (host, netdev string) {
			var stdout, stderr bytes.Buffer
			req := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
				VersionedParams(&corev1.PodExecOptions{Container: container, Command: []string{"fixture", "info"},
					Stdout: true, Stderr: true}, scheme.ParameterCodec)
			ex, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, req.URL())
			if err != nil {
				t.Fatal(err)
			}
			if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
				t.Fatalf("exec in %s: %v (%s)", pod, err, stderr.String())
			}
			host, netdev, _ = strings.Cut(stdout.String(), "\n")
			return host, netdev
		}
		host, netdev := exec("kairo-0", "broker")
		if host != "kairo-0" {
			t.Errorf("hostname inside kairo-0 = %q", host)
		}
		// The command sees the pod's interfaces, not the node's bridge.
		if !strings.Contains(netdev, "eth0:") || strings.Contains(netdev, "kairo-") {
			t.Errorf("interfaces seen by exec in kairo-0:\n%s", netdev)
		}
		// A hostNetwork pod has the node's address, host name and network.
		p, err := client.CoreV1().Pods(ns).Get(ctx, "host-network", metav1.GetOptions{})
		if err != nil || p.Status.PodIP != p.Status.HostIP || p.Status.PodIP == "" {
			t.Fatalf("hostNetwork pod status = %+v, %v; want podIP = hostIP", p.Status, err)
		}
		machine, _ := os.Hostname()
		host, netdev = exec("host-network", "fixture")
		if host != machine || !strings.Contains(netdev, "kairo-") {
			t.Errorf("hostNetwork pod sees host name %q (want %q) and interfaces:\n%s", host, machine, netdev)
		}
	})
	if os.Getenv(smokeBrokerEnv) == "" {
		t.Run("in-cluster clients", func(t *testing.T) {
			base := "http://" + net.JoinHostPort(pods[0].Status.PodIP, "8080")
			// The service-account token, the CA and the kubernetes Service:
			// what rest.InClusterConfig uses in the operator pod.
			who, err := httpGet(base + "/whoami")
			if err != nil || !strings.Contains(who, `"username":"system:serviceaccount:default:default"`) {
				t.Fatalf("self-subject review from the pod: %s %v", who, err)
			}
			var body string
			waitFor(ctx, t, "the client Service to answer from inside a pod", func() bool {
				body, err = httpGet(base + "/get?url=http://kairo.default.svc:8080/hostname")
				return err == nil
			})
			if body != "kairo-0" && body != "kairo-1" {
				t.Errorf("the Service answered %q", body)
			}
		})
		t.Run("peer names", func(t *testing.T) {
			body, err := httpGet("http://" + net.JoinHostPort(pods[0].Status.PodIP, "8080") +
				"/resolve?name=kairo-1.kairo-headless.default.svc.cluster.local")
			if err != nil || body != pods[1].Status.PodIP {
				t.Fatalf("kairo-0 resolves kairo-1's FQDN to %q (%v), want %s", body, err, pods[1].Status.PodIP)
			}
			host, err := httpGet("http://" + net.JoinHostPort(pods[1].Status.PodIP, "8080") + "/hostname")
			if err != nil || host != "kairo-1" {
				t.Fatalf("kairo-1's hostname = %q (%v)", host, err)
			}
		})
	}

	// Store data, kill the process behind kairo-1, and wait for the node to
	// bring it back with the same volume.
	victim := pods[1]
	base := "http://" + net.JoinHostPort(victim.Status.PodIP, "8080")
	if err := w.write(base); err != nil {
		t.Fatalf("write before kill: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(victim.Status.ContainerStatuses[0].ContainerID, "process://"))
	if err != nil {
		t.Fatalf("container ID %q: %v", victim.Status.ContainerStatuses[0].ContainerID, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill broker process %d: %v", pid, err)
	}
	killedAt := time.Now()
	var restarted *corev1.Pod
	waitFor(ctx, t, "kairo-1 restarted and ready", func() bool {
		p, err := client.CoreV1().Pods(ns).Get(ctx, victim.Name, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		cs := p.Status.ContainerStatuses[0]
		restarted = p
		return cs.RestartCount >= 1 && cs.Ready && podIsReady(p)
	})
	t.Logf("restarted and ready %s after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	cs := restarted.Status.ContainerStatuses[0]
	if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("last termination = %+v, want exit code 137 (SIGKILL)", cs.LastTerminationState.Terminated)
	}
	if restarted.UID != victim.UID || restarted.Status.PodIP != victim.Status.PodIP {
		t.Errorf("the container should restart in place (same pod and IP), got pod %s IP %s", restarted.UID, restarted.Status.PodIP)
	}
	if err := w.check(base); err != nil {
		t.Fatal(err)
	}

	t.Run("logs", func(t *testing.T) {
		current, err := client.CoreV1().Pods(ns).GetLogs(victim.Name, &corev1.PodLogOptions{Container: "broker"}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("logs through kube-apiserver: %v", err)
		}
		previous, err := client.CoreV1().Pods(ns).GetLogs(victim.Name, &corev1.PodLogOptions{Container: "broker", Previous: true}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("previous logs: %v", err)
		}
		if len(current) == 0 || len(previous) == 0 {
			t.Fatalf("empty logs: current %q, previous %q", current, previous)
		}
		if os.Getenv(smokeBrokerEnv) == "" && (!bytes.Contains(current, []byte("starts=2")) || !bytes.Contains(previous, []byte("starts=1"))) {
			t.Errorf("current logs %q should be the second run and previous %q the first", current, previous)
		}
	})
}

// createBrokers creates the headless Service and a two-replica
// StatefulSet with a volume claim template, as the operator does.
func createBrokers(ctx context.Context, client kubernetes.Interface, ns string, args []string) error {
	labels := map[string]string{"app.kubernetes.io/name": "kairolog-smoke"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo-headless", Namespace: ns},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true, Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 8080}},
		},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			PeriodSeconds: 1, FailureThreshold: 3,
		}
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			ServiceName:         "kairo-headless",
			Replicas:            ptr.To[int32](2),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](5),
					// The image runs as 65532; its claim is a fresh disk
					// that only the fsGroup makes writable, as the
					// operator's brokers have it.
					SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](65532)},
					Containers: []corev1.Container{{
						Name:  "broker",
						Image: "kairolog/broker:smoke",
						Args:  args,
						Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
						Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: probe("/ready"),
						LivenessProbe:  probe("/health"),
						VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kairolog/data"}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	_, err := client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{})
	return err
}

// createPodIPOnly runs the fixture bound only to its pod IP, as the node
// made product pods do before pods had network namespaces of their own.
func createPodIPOnly(ctx context.Context, client kubernetes.Interface, ns string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-ip-only", Namespace: ns},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{
				Name:  "fixture",
				Image: "kairolog/fixture:smoke",
				Args:  []string{"--listen=$(POD_IP):8080", "--data-dir=/var/lib/kairolog/data"},
				Env: []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 1,
					ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kairolog/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// createHostNetwork runs the fixture in the node's network namespace.
func createHostNetwork(ctx context.Context, client kubernetes.Interface, ns string) error {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "host-network", Namespace: ns},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{
				Name:         "fixture",
				Image:        "kairolog/fixture:smoke",
				Args:         []string{"--listen=127.0.0.1:0", "--data-dir=/var/lib/kairolog/data"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/kairolog/data"}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

func waitReady(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, names ...string) []*corev1.Pod {
	t.Helper()
	out := make([]*corev1.Pod, len(names))
	waitFor(ctx, t, "pods "+strings.Join(names, ", ")+" ready", func() bool {
		for i, n := range names {
			p, err := client.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil || !podIsReady(p) {
				return false
			}
			out[i] = p
		}
		return true
	})
	return out
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// portForward forwards a local port to the pod through kube-apiserver and
// the node's kubelet API, as kubectl port-forward does.
func portForward(t *testing.T, cfg *rest.Config, ns, pod string, port int) string {
	t.Helper()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Post().
		Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	t.Cleanup(func() { close(stop) })
	select {
	case <-ready:
	case err := <-errc:
		t.Fatalf("port-forward: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("port-forward did not get ready")
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		t.Fatalf("port-forward ports: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[0].Local)))
}

// smokeImages writes an OCI layout with the images the smoke test's pods
// pull: kairolog/broker:smoke runs workload (the fixture, or a real
// broker), kairolog/fixture:smoke the fixture; both images hold the
// fixture, whose `info` command is what exec runs.
func smokeImages(t *testing.T, fixture, workload string) string {
	t.Helper()
	b, err := imagebuild.NewBuilder(imagebuild.Options{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var images []imagebuild.Tagged
	for ref, entrypoint := range map[string]string{"kairolog/broker:smoke": workload, "kairolog/fixture:smoke": fixture} {
		spec := imagebuild.BrokerSpec("")
		spec.Name = strings.TrimPrefix(strings.Split(ref, ":")[0], "kairolog/")
		spec.Entries = []imagebuild.Entry{
			{Path: "/usr/local/bin/workload", Source: entrypoint, Mode: 0o755},
			{Path: "/usr/local/bin/fixture", Source: fixture, Mode: 0o755},
			{Path: imagebuild.BrokerDataDir, Mode: 0o755, UID: imagebuild.NonRootID, GID: imagebuild.NonRootID},
		}
		spec.Entrypoint = []string{"/usr/local/bin/workload"}
		img, err := b.Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, imagebuild.Tagged{Ref: tag, Image: img})
	}
	dir := filepath.Join(t.TempDir(), "oci")
	if err := imagebuild.WriteLayout(dir, images); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildFixture builds the broker stand-in, static as the images'
// programs are, and returns its path.
func buildFixture(t *testing.T, repo string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "fixture")
	goBin := "go"
	cmd := exec.Command(goBin, "build", "-o", out, "./internal/nodeagent/testdata/fixture")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = repo
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build fixture: %v\n%s", err, b)
	}
	return out
}

var httpClient = &http.Client{Timeout: 5 * time.Second}

func httpGet(url string) (string, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b), nil
}

func httpPost(url, body string) (string, error) {
	resp, err := httpClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("POST %s: %s: %s", url, resp.Status, b)
	}
	var ignored json.RawMessage
	_ = json.Unmarshal(b, &ignored)
	return string(b), nil
}

// testWriter sends start-up progress to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
