package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kairolog/kairolog/internal/imagebuild"
	"github.com/kairolog/kairolog/internal/localcluster"
)

// TestDemo runs `make demo`'s program non-interactively, twice on the same
// state directory as a user running `make demo` again would: each run must
// bring up the cluster, install the operator with the real helm CLI, get
// the samples Ready, produce and fetch a record through kubectl
// port-forward, print what to try, and leave no process and no bridge
// behind when it exits.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole demo; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the local cluster needs root")
	}
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH")
	}
	repo, err := localcluster.FindRepoDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", "k8s", "kube-apiserver")); err != nil {
		t.Fatalf("%v: run hack/build-k8s-binaries.sh first (or go test -short)", err)
	}
	if _, err := os.Stat(filepath.Join(repo, "bin", "helm")); err != nil {
		// What `make demo` does through its helm prerequisite.
		t.Log("bin/helm is missing; building it with make helm")
		if out, err := exec.Command("make", "-C", repo, "helm").CombinedOutput(); err != nil {
			t.Fatalf("make helm: %v\n%s", err, out)
		}
	}
	// The binaries of this tree, not whatever bin/ holds, built as make
	// build does and made into images as make images does.
	bins := t.TempDir()
	for name, pkg := range map[string]string{"kairo-local": ".", "broker": "../broker", "manager": "../manager", "kairoctl": "../kairoctl"} {
		build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bins, name), pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	layout := demoImages(t, bins)
	state := filepath.Join(t.TempDir(), "demo")

	for run := 1; run <= 2; run++ {
		began := time.Now()
		cmd := exec.Command(filepath.Join(bins, "kairo-local"), "demo", "--exit-after-round", "--state-dir", state, "--repo", repo,
			"--images", layout)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })

		// Every process the demo ever had below it, sampled every 20ms.
		seen := map[int]string{}
		sampled := make(chan struct{})
		stopSampling := make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				for _, pid := range descendants(cmd.Process.Pid) {
					if c := cmdline(pid); c != "" {
						seen[pid] = c
					}
				}
				select {
				case <-stopSampling:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		var lines []string
		var bridge string
		scanned := make(chan struct{})
		go func() {
			defer close(scanned)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if _, rest, ok := strings.Cut(sc.Text(), " on bridge "); ok {
					bridge, _, _ = strings.Cut(rest, ",")
				}
			}
		}()
		done := make(chan error, 1)
		go func() {
			<-scanned
			err := cmd.Wait()
			close(stopSampling)
			<-sampled
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(6 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("run %d: the demo did not finish in 6 minutes:\n%s", run, strings.Join(lines, "\n"))
		}
		output := strings.Join(lines, "\n")
		if err != nil {
			t.Fatalf("run %d: demo exited with %v:\n%s", run, err, output)
		}
		t.Logf("run %d took %s", run, time.Since(began).Round(100*time.Millisecond))
		if testing.Verbose() {
			t.Logf("run %d output:\n%s", run, output)
		}
		for _, want := range []string{
			"image registry on 127.0.0.1:",
			"docker.io/kairolog/broker:dev@sha256:",
			"docker.io/kairolog/operator:dev@sha256:",
			"$ helm install kairolog-operator charts/kairolog-operator",
			"$ kubectl apply -k config/samples",
			"kc/kairo Ready, 3/3 brokers; kt/orders Ready; kcg/analytics-workers Ready",
			"$ kubectl port-forward --namespace default svc/kairo ",
			`fetched "hello from make demo at `,
			"export KUBECONFIG=" + filepath.Join(state, "kubeconfig"),
			"kubectl get kc,kt,kcg",
			"Stopping the cluster and every process the demo started",
		} {
			if !strings.Contains(output, want) {
				t.Errorf("run %d: the output lacks %q:\n%s", run, want, output)
			}
		}
		var names []string
		for _, c := range seen {
			name, _, _ := strings.Cut(c, " ")
			names = append(names, filepath.Base(name))
		}
		for _, kind := range []string{"kube-apiserver", "etcd", "helm", "kubectl", "broker", "manager"} {
			if !slices.Contains(names, kind) {
				t.Errorf("run %d: never saw a %s process below the demo (saw %v)", run, kind, names)
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for pid, c := range seen {
			for alive(pid) && cmdline(pid) == c && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if alive(pid) && cmdline(pid) == c {
				t.Errorf("run %d: process %d (%s) outlived the demo", run, pid, c)
			}
		}
		if bridge == "" || linkExists(bridge) {
			t.Errorf("run %d: bridge %q is still there after the demo", run, bridge)
		}
	}
}

// demoImages builds kairolog/broker:dev and kairolog/operator:dev from
// bins into an OCI layout, as make images does.
func demoImages(t *testing.T, bins string) string {
	t.Helper()
	b, err := imagebuild.NewBuilder(imagebuild.Options{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var images []imagebuild.Tagged
	for _, spec := range imagebuild.Specs(bins) {
		img, err := b.Build(spec)
		if err != nil {
			t.Fatal(err)
		}
		tag, err := name.NewTag(spec.Repository + ":" + demoImageTag)
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

// descendants lists every process below pid.
func descendants(pid int) []int {
	var out []int
	for _, child := range childrenOf(pid) {
		out = append(out, child)
		out = append(out, descendants(child)...)
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// TestForwardedPort: the demo learns the local port kubectl picked from the
// line kubectl port-forward prints once it listens, and from no other.
func TestForwardedPort(t *testing.T) {
	for _, tc := range []struct {
		line string
		port int
		ok   bool
	}{
		{"Forwarding from 127.0.0.1:8080 -> 8080", 8080, true},
		{"Forwarding from 127.0.0.1:41873 -> 8080", 41873, true},
		{"Forwarding from [::1]:41873 -> 8080", 41873, true},
		{"Handling connection for 41873", 0, false},
		{"error: unable to listen on any of the requested ports: [{8080 8080}]", 0, false},
		{"Forwarding from 127.0.0.1:0 -> 8080", 0, false},
	} {
		port, ok := forwardedPort(tc.line)
		if port != tc.port || ok != tc.ok {
			t.Errorf("forwardedPort(%q) = %d, %v; want %d, %v", tc.line, port, ok, tc.port, tc.ok)
		}
	}
}
