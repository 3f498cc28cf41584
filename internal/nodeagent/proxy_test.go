package nodeagent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// backend serves its name over HTTP on a fresh loopback port.
func backend(t *testing.T, name string) (ip string, port int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "127.0.0.1", l.Addr().(*net.TCPAddr).Port
}

func get(url string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestServiceProxy runs the proxy in its namespace on a test bridge and
// connects from a pod, while a process on the machine holds the Service's
// port on every address (as a development server on *:8080 would).
func TestServiceProxy(t *testing.T) {
	const svcPort = 8080
	n := testBridge(t)
	if l, err := net.Listen("tcp", fmt.Sprintf(":%d", svcPort)); err == nil {
		t.Cleanup(func() { _ = l.Close() })
	} // else something on the machine holds it already, which is the point
	proxyNS, err := n.attachServiceProxy()
	if err != nil {
		t.Fatal(err)
	}
	defer proxyNS.close()
	base := n.gateway.To4()
	client, err := n.attach(net.IPv4(base[0], base[1], base[2], 10))
	if err != nil {
		t.Fatal(err)
	}
	defer client.close()
	get := func(url string) (string, error) { return getIn(client, url) }
	svcBase := n.services.IP.To4()
	clusterIP := net.IPv4(svcBase[0], svcBase[1], svcBase[2], 20).String()
	ipA, portA := backend(t, "a")
	ipB, portB := backend(t, "b")
	pod := func(name, ip string, port int, ready bool) *corev1.Pod {
		p := stsPod(name, "team", ip, ready)
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}
		return p
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo", Namespace: "team"},
		Spec: corev1.ServiceSpec{ClusterIP: clusterIP, Selector: map[string]string{"app": "kairo"},
			Ports: []corev1.ServicePort{{Port: svcPort, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}},
	}
	p := newServiceProxy(slog.New(slog.DiscardHandler), "", proxyNS)
	defer p.close()
	url := fmt.Sprintf("http://%s:%d/", clusterIP, svcPort)

	p.sync([]*corev1.Service{svc}, []*corev1.Pod{pod("kairo-0", ipA, portA, true), pod("kairo-1", ipB, portB, true)})
	seen := map[string]int{}
	for range 4 {
		body, err := get(url)
		if err != nil {
			t.Fatal(err)
		}
		seen[body]++
	}
	if seen["a"] != 2 || seen["b"] != 2 {
		t.Errorf("connections went to %v, want two each (round-robin over ready endpoints)", seen)
	}

	// kairo-1 is not ready any more: it gets no traffic.
	p.sync([]*corev1.Service{svc}, []*corev1.Pod{pod("kairo-0", ipA, portA, true), pod("kairo-1", ipB, portB, false)})
	for range 3 {
		if body, err := get(url); err != nil || body != "a" {
			t.Fatalf("with kairo-1 not ready got %q, %v", body, err)
		}
	}

	// No ready endpoint: the connection is refused or reset, not hung.
	p.sync([]*corev1.Service{svc}, []*corev1.Pod{pod("kairo-0", ipA, portA, false)})
	began := time.Now()
	if _, err := get(url); err == nil {
		t.Fatal("a Service without endpoints answered")
	}
	if time.Since(began) > time.Second {
		t.Errorf("failing took %s", time.Since(began))
	}

	// The Service is deleted: its port closes.
	p.sync(nil, nil)
	var c net.Conn
	if err := client.do(func() (err error) {
		c, err = net.DialTimeout("tcp", fmt.Sprintf("%s:%d", clusterIP, svcPort), time.Second)
		return err
	}); err == nil {
		_ = c.Close()
		t.Fatal("deleted Service still listens")
	}
}

// getIn is get from inside a pod's network namespace.
func getIn(ns *podNetNS, url string) (string, error) {
	dial := func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = ns.do(func() error {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DialContext: dial}}
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestProxyTableKubernetesService(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: "127.1.20.1", Ports: []corev1.ServicePort{
			{Name: "https", Port: 443, TargetPort: intstr.FromInt32(6443), Protocol: corev1.ProtocolTCP}}},
	}
	table := proxyTable([]*corev1.Service{svc}, nil, "127.0.20.1:35000")
	if got := table["127.1.20.1:443"]; len(got) != 1 || got[0] != "127.0.20.1:35000" {
		t.Fatalf("kubernetes Service forwards to %v, want kube-apiserver", got)
	}
}
