package nodeagent

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func envTestPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kairo-1", Namespace: "team", UID: "uid-1",
			Labels: map[string]string{"app": "kairo"}, Annotations: map[string]string{"rack": "r2"}},
		Spec: corev1.PodSpec{NodeName: "kairo-local", ServiceAccountName: "kairo"},
		Status: corev1.PodStatus{PodIP: "127.0.20.7", PodIPs: []corev1.PodIP{{IP: "127.0.20.7"}},
			HostIP: "127.0.20.1", HostIPs: []corev1.HostIP{{IP: "127.0.20.1"}}},
	}
}

func TestContainerEnv(t *testing.T) {
	src := newFakeSource()
	src.configMaps["team/settings"] = &corev1.ConfigMap{Data: map[string]string{"LOG_LEVEL": "debug", "retention": "7d"}}
	src.secrets["team/creds"] = &corev1.Secret{Data: map[string][]byte{"password": []byte("s3cret")}}
	src.services = []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
			Spec: corev1.ServiceSpec{ClusterIP: "127.1.20.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kairo-client", Namespace: "team"},
			Spec: corev1.ServiceSpec{ClusterIP: "127.1.20.9", Ports: []corev1.ServicePort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "kairo-headless", Namespace: "team"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}},
	}
	c := &corev1.Container{
		Name: "broker",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("1500m")}},
		EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}, Prefix: "CFG_"},
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}, Optional: ptr.To(true)}},
		},
		Env: []corev1.EnvVar{
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "RACK", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['rack']"}}},
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
			{Name: "CPUS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
			{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "absent", Optional: ptr.To(true)}}},
			{Name: "LISTEN", Value: "$(POD_IP):8080"},
			{Name: "ADVERTISED", Value: "$(POD_NAME).kairo-headless.$(UNDEFINED)"},
			{Name: "KAIRO_CLIENT_SERVICE_HOST", Value: "overridden"},
		},
	}
	env, order, err := containerEnv(context.Background(), envTestPod(), c, src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"POD_IP": "127.0.20.7", "POD_NAME": "kairo-1", "RACK": "r2", "NODE": "kairo-local",
		"MEM_MI": "512", "CPUS": "2", "PASSWORD": "s3cret",
		"LISTEN":        "127.0.20.7:8080",
		"ADVERTISED":    "kairo-1.kairo-headless.$(UNDEFINED)",
		"CFG_LOG_LEVEL": "debug", "CFG_retention": "7d",
		"KUBERNETES_SERVICE_HOST": "127.1.20.1", "KUBERNETES_SERVICE_PORT": "443",
		"KUBERNETES_PORT_443_TCP_ADDR":   "127.1.20.1",
		"KAIRO_CLIENT_SERVICE_HOST":      "overridden",
		"KAIRO_CLIENT_SERVICE_PORT_HTTP": "8080",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"OPTIONAL", "KAIRO_HEADLESS_SERVICE_HOST"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s should not be set", k)
		}
	}
	if len(order) != len(env) {
		t.Errorf("order has %d names for %d variables", len(order), len(env))
	}
	if got := strings.Join(order[:2], ","); got != "CFG_LOG_LEVEL,CFG_retention" {
		t.Errorf("envFrom variables should come first, got %s", got)
	}

	// Without service links only the kubernetes Service is announced.
	pod := envTestPod()
	pod.Spec.EnableServiceLinks = ptr.To(false)
	env, _, err = containerEnv(context.Background(), pod, &corev1.Container{Name: "c"}, src)
	if err != nil {
		t.Fatal(err)
	}
	if env["KUBERNETES_SERVICE_HOST"] != "127.1.20.1" || env["KAIRO_CLIENT_SERVICE_HOST"] != "" {
		t.Errorf("enableServiceLinks=false: env = %v", env)
	}

	// A required key that is missing is an error the pod reports.
	c = &corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "absent"}}}}}
	if _, _, err := containerEnv(context.Background(), envTestPod(), c, src); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("missing required key: err = %v", err)
	}
}

func TestWithImageEnv(t *testing.T) {
	got := withImageEnv([]string{"PATH=/usr/bin", "KAIRO_DATA_DIR=/var/lib/kairolog/data"},
		map[string]string{"KAIRO_DATA_DIR": "/data"}, []string{"KAIRO_DATA_DIR"})
	want := "PATH=/usr/bin KAIRO_DATA_DIR=/data"
	if strings.Join(got, " ") != want {
		t.Errorf("env = %q, want %q (the container's value wins)", got, want)
	}
}
