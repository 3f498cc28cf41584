package nodeagent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageRepository(t *testing.T) {
	for image, want := range map[string]string{
		"kairolog/broker":                          "kairolog/broker",
		"kairolog/broker:v0.1.0":                   "kairolog/broker",
		"docker.io/kairolog/broker:latest":         "kairolog/broker",
		"ghcr.io/kairolog/operator:v1@sha256:abcd": "kairolog/operator",
		"localhost:5000/kairolog/broker:dev":       "kairolog/broker",
		"localhost/kairolog/broker":                "kairolog/broker",
		"registry.example.com:443/kairolog/broker": "kairolog/broker",
		"busybox":                        "busybox",
		"docker.io/library/busybox:1.36": "busybox",
		"kairolog/broker@sha256:0123456789abcdef00": "kairolog/broker",
	} {
		if got := ImageRepository(image); got != want {
			t.Errorf("ImageRepository(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestImageMapResolve(t *testing.T) {
	dir := t.TempDir()
	broker := filepath.Join(dir, "bin", "broker")
	if err := os.MkdirAll(filepath.Dir(broker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broker, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := DefaultImageMap(dir)

	got, err := m.Resolve("ghcr.io/kairolog/broker:v1")
	if err != nil || got != broker {
		t.Fatalf("Resolve(broker) = %q, %v; want %q", got, err, broker)
	}

	_, err = m.Resolve("nginx:1.27")
	if !errors.Is(err, ErrImageNotMapped) {
		t.Fatalf("Resolve(nginx) error = %v, want ErrImageNotMapped", err)
	}
	if !strings.Contains(err.Error(), "kairolog/broker") {
		t.Errorf("error %q should list the images this node runs", err)
	}

	// The operator binary has not been built: a clear error, not a mapping miss.
	_, err = m.Resolve("kairolog/operator:v1")
	if err == nil || errors.Is(err, ErrImageNotMapped) || !strings.Contains(err.Error(), "manager") {
		t.Fatalf("Resolve(operator) error = %v, want a missing-binary error naming bin/manager", err)
	}

	if err := m.Set("example.com/team/tool:v2=" + broker); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Resolve("team/tool"); err != nil || got != broker {
		t.Fatalf("after Set, Resolve(team/tool) = %q, %v", got, err)
	}
	if err := m.Set("no-equals-sign"); err == nil {
		t.Error("Set accepted a mapping without '='")
	}
}
