package nodeagent

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	if err != nil || got.Binary != broker {
		t.Fatalf("Resolve(broker) = %+v, %v; want binary %q", got, err, broker)
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
	if got, err := m.Resolve("team/tool"); err != nil || got.Binary != broker {
		t.Fatalf("after Set, Resolve(team/tool) = %+v, %v", got, err)
	}
	if err := m.Set("no-equals-sign"); err == nil {
		t.Error("Set accepted a mapping without '='")
	}
}

func TestImageMapOverrideKeepsImageConfig(t *testing.T) {
	m := DefaultImageMap("/repo")
	m.Merge(ImageMap{"docker.io/kairolog/broker": {Binary: "/tmp/other-broker"}})
	img := m["kairolog/broker"]
	if img.Binary != "/tmp/other-broker" || img.WorkingDir != "/var/lib/kairolog" {
		t.Fatalf("merged broker image = %+v; want the new binary with the Dockerfile's WORKDIR", img)
	}
	if err := m.Set("kairolog/operator=/tmp/manager"); err != nil {
		t.Fatal(err)
	}
	if img := m["kairolog/operator"]; img.Binary != "/tmp/manager" || len(img.Env) == 0 {
		t.Fatalf("--image-map lost the operator's image config: %+v", img)
	}
}

// TestDefaultImagesFollowDockerfile keeps DefaultImageMap in step with the
// ENV, WORKDIR, VOLUME and ENTRYPOINT of the Dockerfile's image targets.
func TestDefaultImagesFollowDockerfile(t *testing.T) {
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Skipf("no Dockerfile: %v", err)
	}
	defer f.Close()
	type stage struct {
		env        []string
		workdir    string
		volumes    []string
		entrypoint string
	}
	stages := map[string]*stage{}
	var cur *stage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(line, "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			cur = &stage{}
			if len(fields) >= 4 && strings.EqualFold(fields[2], "AS") {
				stages[fields[3]] = cur
			}
		case "ENV":
			cur.env = append(cur.env, fields[1:]...)
		case "WORKDIR":
			cur.workdir = fields[1]
		case "VOLUME":
			cur.volumes = append(cur.volumes, fields[1:]...)
		case "ENTRYPOINT":
			cur.entrypoint = strings.Trim(strings.Join(fields[1:], " "), `[]" `)
		}
	}
	defaults := DefaultImageMap("/repo")
	for target, repo := range map[string]string{"broker": "kairolog/broker", "operator": "kairolog/operator"} {
		st, ok := stages[target]
		if !ok {
			t.Errorf("Dockerfile has no %q target", target)
			continue
		}
		img := defaults[repo]
		for _, kv := range st.env {
			if !slices.Contains(img.Env, kv) {
				t.Errorf("%s: Dockerfile sets ENV %s, DefaultImageMap does not", repo, kv)
			}
		}
		if st.workdir != img.WorkingDir {
			t.Errorf("%s: Dockerfile WORKDIR %q, DefaultImageMap %q", repo, st.workdir, img.WorkingDir)
		}
		if !slices.Equal(st.volumes, img.Volumes) {
			t.Errorf("%s: Dockerfile VOLUME %q, DefaultImageMap %q", repo, st.volumes, img.Volumes)
		}
		if filepath.Base(st.entrypoint) != filepath.Base(img.Binary) {
			t.Errorf("%s: Dockerfile ENTRYPOINT %q, but the image maps to %s", repo, st.entrypoint, img.Binary)
		}
	}
}
