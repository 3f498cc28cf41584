package nodeagent

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestHTTPProbe(t *testing.T) {
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ready" || r.Header.Get("X-Probe") != "yes" {
			http.NotFound(w, r)
			return
		}
		if !healthy {
			http.Error(w, "not caught up", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	host, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	target := probeTarget{podIP: host, ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
		Path: "/ready", Port: intstr.FromString("http"),
		HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "yes"}},
	}}}
	if err := runProbe(context.Background(), probe, target); err != nil {
		t.Fatalf("healthy probe failed: %v", err)
	}
	healthy = false
	err := runProbe(context.Background(), probe, target)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "not caught up") {
		t.Fatalf("unhealthy probe error = %v, want a 503 with the body", err)
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}}
	target := probeTarget{podIP: "127.0.0.1"}
	if err := runProbe(context.Background(), probe, target); err != nil {
		t.Fatalf("open port: %v", err)
	}
	_ = l.Close()
	if err := runProbe(context.Background(), probe, target); err == nil {
		t.Fatal("closed port passed the probe")
	}
}

func TestProbeNamedPortMissing(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("admin")}}}
	if err := runProbe(context.Background(), probe, probeTarget{podIP: "127.0.0.1"}); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("error = %v, want one naming the missing port", err)
	}
}

func TestProbeThresholds(t *testing.T) {
	s := probeState{probe: probeDefaults(&corev1.Probe{SuccessThreshold: 2, FailureThreshold: 3})}
	passing := false
	steps := []struct {
		ok          bool
		wantPassing bool
		wantChanged bool
	}{
		{true, false, false}, // one success of two
		{true, true, true},   // ready
		{false, true, false}, // one failure of three
		{false, true, false},
		{true, true, false}, // a success resets the failures
		{false, true, false},
		{false, true, false},
		{false, false, true}, // third failure in a row
	}
	for i, st := range steps {
		var changed bool
		passing, changed = s.record(st.ok, passing)
		if passing != st.wantPassing || changed != st.wantChanged {
			t.Fatalf("step %d: passing=%v changed=%v, want %v %v", i, passing, changed, st.wantPassing, st.wantChanged)
		}
	}
}
