/*
Copyright 2026 The KairoLog Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package packaging_test

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/kairolog/kairolog/internal/imagebuild"
)

// dockerfileImage is what a Dockerfile target gives an image: its own
// instructions on top of the runtime stage's.
type dockerfileImage struct {
	entrypoint []string
	user       string
	env        []string
	workdir    string
	volumes    []string
	ports      []string
	labels     map[string]string
	// files are the destinations of COPY --from=<build stage>, with the
	// owner a --chown gives them ("" for root).
	files map[string]string
}

func readDockerfileImage(t *testing.T, stages []dockerStage, target string) dockerfileImage {
	t.Helper()
	img := dockerfileImage{labels: map[string]string{}, files: map[string]string{}}
	for _, s := range []dockerStage{stageNamed(t, stages, "runtime"), stageNamed(t, stages, target)} {
		for _, in := range s.instrs {
			words := shellWords(in.args)
			switch in.cmd {
			case "ENTRYPOINT":
				if err := json.Unmarshal([]byte(in.args), &img.entrypoint); err != nil {
					t.Fatalf("%s: ENTRYPOINT %s is not in exec form", target, in.args)
				}
			case "USER":
				img.user = in.args
			case "ENV":
				img.env = append(img.env, words...)
			case "WORKDIR":
				img.workdir = in.args
			case "VOLUME":
				img.volumes = append(img.volumes, words...)
			case "EXPOSE":
				for _, p := range words {
					if !strings.Contains(p, "/") {
						p += "/tcp"
					}
					img.ports = append(img.ports, p)
				}
			case "LABEL":
				for _, kv := range words {
					k, v, _ := strings.Cut(kv, "=")
					img.labels[k] = v
				}
			case "COPY":
				if !strings.Contains(in.args, "--from=") {
					continue
				}
				owner := ""
				var srcs []string
				for _, w := range words {
					if o, ok := strings.CutPrefix(w, "--chown="); ok {
						owner = o
					} else if !strings.HasPrefix(w, "--") {
						srcs = append(srcs, w)
					}
				}
				dest := srcs[len(srcs)-1]
				for _, src := range srcs[:len(srcs)-1] {
					p := dest
					if strings.HasSuffix(dest, "/") {
						p = dest + filepath.Base(src)
					}
					img.files[p] = owner
				}
			}
		}
	}
	return img
}

// builtImage is what `make images` builds for a spec, from stand-in
// binaries.
func builtImage(t *testing.T, spec imagebuild.Spec) (dockerfileImage, map[string]*tar.Header) {
	t.Helper()
	b, err := imagebuild.NewBuilder(imagebuild.Options{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	out := dockerfileImage{entrypoint: c.Entrypoint, user: c.User, env: c.Env, workdir: c.WorkingDir, labels: c.Labels}
	for v := range c.Volumes {
		out.volumes = append(out.volumes, v)
	}
	for p := range c.ExposedPorts {
		out.ports = append(out.ports, p)
	}
	sort.Strings(out.volumes)
	sort.Strings(out.ports)
	hdrs := map[string]*tar.Header{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		hdrs["/"+strings.TrimSuffix(h.Name, "/")] = h
	}
	return out, hdrs
}

// TestImagesMatchTheDockerfile: `make images` (internal/imagebuild) and
// `docker build --target broker|operator` give images with the same
// entrypoint, user, environment, working directory, volume, ports, labels
// and program paths, so the local cluster runs what a Docker user builds.
func TestImagesMatchTheDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	bins := t.TempDir()
	for _, b := range []string{"broker", "kairoctl", "manager"} {
		if err := os.WriteFile(filepath.Join(bins, b), []byte("#!stand-in "+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, spec := range imagebuild.Specs(bins) {
		t.Run(spec.Name, func(t *testing.T) {
			want := readDockerfileImage(t, stages, spec.Name)
			got, files := builtImage(t, spec)
			if !slices.Equal(got.entrypoint, want.entrypoint) {
				t.Errorf("entrypoint: make images %q, Dockerfile %q", got.entrypoint, want.entrypoint)
			}
			if got.user != want.user {
				t.Errorf("user: make images %q, Dockerfile %q", got.user, want.user)
			}
			// The Dockerfile's base sets PATH; its own ENV adds the rest.
			gotEnv := slices.DeleteFunc(slices.Clone(got.env), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
			if !slices.Equal(gotEnv, want.env) {
				t.Errorf("env: make images %q (besides PATH), Dockerfile %q", gotEnv, want.env)
			}
			if !slices.ContainsFunc(got.env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=/usr/local/sbin:/usr/local/bin:") }) {
				t.Errorf("env %q has no PATH like distroless's", got.env)
			}
			if got.workdir != want.workdir {
				t.Errorf("workdir: make images %q, Dockerfile %q", got.workdir, want.workdir)
			}
			sort.Strings(want.volumes)
			sort.Strings(want.ports)
			if !slices.Equal(got.volumes, want.volumes) || !slices.Equal(got.ports, want.ports) {
				t.Errorf("volumes %q and ports %q; the Dockerfile's %q and %q", got.volumes, got.ports, want.volumes, want.ports)
			}
			for k, v := range want.labels {
				gv, ok := got.labels[k]
				switch {
				case !ok:
					t.Errorf("label %s is missing", k)
				case !strings.Contains(v, "${") && gv != v:
					t.Errorf("label %s = %q, Dockerfile %q", k, gv, v)
				}
			}
			for p, owner := range want.files {
				h, ok := files[p]
				if !ok {
					t.Errorf("the Dockerfile puts %s in the image, make images does not", p)
					continue
				}
				wantUID := 0
				if owner != "" {
					wantUID = imagebuild.NonRootID
				}
				if h.Uid != wantUID {
					t.Errorf("%s is owned by %d, the Dockerfile's by %q", p, h.Uid, owner)
				}
			}
			// distroless's nonroot user and CA bundle are where programs look.
			for _, p := range []string{"/etc/passwd", "/etc/group", imagebuild.CABundlePath, "/tmp", "/home/nonroot"} {
				if _, ok := files[p]; !ok {
					t.Errorf("the base lacks %s, which distroless/static has", p)
				}
			}
		})
	}
}
