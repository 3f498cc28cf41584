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
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/controllers/resources"
)

// The images cannot be built where the tests run (no container engine), so
// these tests read the Dockerfile: its Go build lines must be the Makefile's,
// its build context must hold every package the binaries import, and the
// broker image must agree with the pods the operator builds.

type dockerInstruction struct {
	cmd  string // upper case: RUN, COPY, …
	args string
}

type dockerStage struct {
	name, base string
	instrs     []dockerInstruction
}

func (s dockerStage) all(cmd string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// parseDockerfile splits the Dockerfile into stages of instructions, with
// line continuations joined and comments dropped, as BuildKit reads it.
func parseDockerfile(t *testing.T) []dockerStage {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []dockerStage
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		cmd = strings.ToUpper(cmd)
		args = strings.TrimSpace(args)
		if cmd == "FROM" {
			fields := strings.Fields(args)
			var base, name string
			for i := 0; i < len(fields); i++ {
				switch {
				case strings.HasPrefix(fields[i], "--"):
				case strings.EqualFold(fields[i], "AS") && i+1 < len(fields):
					name = fields[i+1]
					i++
				default:
					base = fields[i]
				}
			}
			stages = append(stages, dockerStage{name: name, base: base})
			return
		}
		if len(stages) == 0 {
			return // ARG before the first FROM
		}
		st := &stages[len(stages)-1]
		st.instrs = append(st.instrs, dockerInstruction{cmd: cmd, args: args})
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			logical.WriteString(cont + " ")
			continue
		}
		logical.WriteString(line)
		flush()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	return stages
}

func stageNamed(t *testing.T, stages []dockerStage, name string) dockerStage {
	t.Helper()
	for _, s := range stages {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("the Dockerfile has no stage %q", name)
	return dockerStage{}
}

// shellWords splits a command line into words, honouring quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// goBuild is one `go build` command line, normalised for comparison.
type goBuild struct {
	env    []string // KEY=value words before `go`, sorted
	flags  []string // flags and their values, in order, without -o
	output string   // base name of -o
	pkg    string
}

func (b goBuild) String() string {
	flags := make([]string, len(b.flags))
	for i, f := range b.flags {
		if strings.ContainsAny(f, " \t") {
			f = strconv.Quote(f)
		}
		flags[i] = f
	}
	return strings.Join(b.env, " ") + " go build " + strings.Join(flags, " ") + " -o …/" + b.output + " " + b.pkg
}

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// goFlagsWithValue are the go build flags whose value is the next word.
var goFlagsWithValue = map[string]bool{"-o": true, "-ldflags": true, "-gcflags": true, "-asmflags": true, "-tags": true, "-mod": true, "-p": true, "-buildmode": true, "-pgo": true}

// goBuilds finds every `go build` in a shell command line.
func goBuilds(t *testing.T, line string) []goBuild {
	t.Helper()
	var out []goBuild
	words := shellWords(line)
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "go" || words[i+1] != "build" {
			continue
		}
		var b goBuild
		for j := i - 1; j >= 0 && envWord.MatchString(words[j]); j-- {
			b.env = append(b.env, words[j])
		}
		slices.Sort(b.env)
		j := i + 2
		for ; j < len(words); j++ {
			w := words[j]
			if w == "&&" || w == ";" || w == "||" || strings.HasSuffix(w, ";") {
				if strings.HasSuffix(w, ";") && w != ";" {
					b.pkg = strings.TrimSuffix(w, ";")
				}
				break
			}
			switch {
			case w == "-o" && j+1 < len(words):
				b.output = path.Base(words[j+1])
				j++
			case goFlagsWithValue[w] && j+1 < len(words):
				b.flags = append(b.flags, w, words[j+1])
				j++
			case strings.HasPrefix(w, "-"):
				b.flags = append(b.flags, w)
			default:
				b.pkg = w
			}
		}
		if b.pkg == "" || b.output == "" {
			t.Fatalf("cannot read the package and output of %q", line)
		}
		out = append(out, b)
	}
	return out
}

// makefileBuilds expands GO_BUILD_ENV and GO_BUILD_FLAGS in the Makefile's
// `build` recipe and returns its go build lines.
func makefileBuilds(t *testing.T) []goBuild {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Z_]+)\s*[:?]?=\s*(.*)$`)
	var recipe []string
	inBuild := false
	for _, line := range strings.Split(string(data), "\n") {
		if m := assign.FindStringSubmatch(line); m != nil {
			vars[m[1]] = m[2]
		}
		switch {
		case strings.HasPrefix(line, "build:"):
			inBuild = true
		case inBuild && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, line)
		case inBuild:
			inBuild = false
		}
	}
	for _, v := range []string{"GO_BUILD_ENV", "GO_BUILD_FLAGS"} {
		if vars[v] == "" {
			t.Fatalf("the Makefile does not set %s", v)
		}
	}
	var builds []goBuild
	for _, line := range recipe {
		line = strings.ReplaceAll(line, "$(GO_BUILD_ENV)", vars["GO_BUILD_ENV"])
		line = strings.ReplaceAll(line, "$(GO_BUILD_FLAGS)", vars["GO_BUILD_FLAGS"])
		builds = append(builds, goBuilds(t, line)...)
	}
	if len(builds) == 0 {
		t.Fatal("the Makefile's build target has no go build line")
	}
	return builds
}

func dockerfileBuilds(t *testing.T, stages []dockerStage) []goBuild {
	t.Helper()
	var builds []goBuild
	for _, s := range stages {
		for _, run := range s.all("RUN") {
			builds = append(builds, goBuilds(t, run)...)
		}
	}
	return builds
}

// TestDockerfileBuildsLikeTheMakefile: every binary the images ship is built
// with the Makefile's environment and flags, so what `make build` tests is
// what the images run.
func TestDockerfileBuildsLikeTheMakefile(t *testing.T) {
	mk := makefileBuilds(t)
	docker := dockerfileBuilds(t, parseDockerfile(t))
	for _, want := range []string{"./cmd/manager", "./cmd/broker"} {
		if !slices.ContainsFunc(docker, func(b goBuild) bool { return b.pkg == want }) {
			t.Errorf("the Dockerfile does not build %s", want)
		}
	}
	for _, d := range docker {
		i := slices.IndexFunc(mk, func(b goBuild) bool { return b.pkg == d.pkg })
		if i < 0 {
			t.Errorf("the Dockerfile builds %s, which the Makefile's build target does not", d.pkg)
			continue
		}
		if m := mk[i]; !slices.Equal(d.env, m.env) || !slices.Equal(d.flags, m.flags) || d.output != m.output {
			t.Errorf("the Dockerfile and the Makefile build %s differently:\n  Dockerfile: %s\n  Makefile:   %s", d.pkg, d, m)
		}
	}
}

func TestGoBuildsParsesMakeRecipes(t *testing.T) {
	got := goBuilds(t, `@if [ -d cmd/x ]; then CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(LOCALBIN)/x ./cmd/x; fi`)
	want := goBuild{env: []string{"CGO_ENABLED=0"}, flags: []string{"-trimpath", "-ldflags", "-s -w"}, output: "x", pkg: "./cmd/x"}
	if len(got) != 1 || got[0].String() != want.String() {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDockerBuildContextHoldsEveryPackage: the build stage copies, and
// .dockerignore lets through, every directory of this module that the
// binaries import.
func TestDockerBuildContextHoldsEveryPackage(t *testing.T) {
	stages := parseDockerfile(t)
	var pkgs []string
	for _, b := range dockerfileBuilds(t, stages) {
		pkgs = append(pkgs, b.pkg)
	}
	copied := map[string]bool{}
	for _, s := range stages {
		for _, c := range s.all("COPY") {
			if strings.Contains(c, "--from=") {
				continue
			}
			words := strings.Fields(c)
			for _, src := range words[:len(words)-1] {
				copied[strings.TrimSuffix(src, "/")] = true
			}
		}
	}
	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "!"); ok {
			allowed[strings.TrimSuffix(rest, "/")] = true
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !copied[f] || !allowed[f] {
			t.Errorf("%s is not in the build context", f)
		}
	}

	const module = "github.com/kairolog/kairolog/"
	cmd := exec.Command("go", append([]string{"list", "-deps", "-json=ImportPath,Standard"}, pkgs...)...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", pkgs, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Standard   bool
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		if seen[top] {
			continue
		}
		seen[top] = true
		if !copied[top] {
			t.Errorf("the binaries import %s, but the Dockerfile does not COPY %s/", p.ImportPath, top)
		}
		if !allowed[top] {
			t.Errorf("the binaries import %s, but .dockerignore keeps %s/ out of the build context", p.ImportPath, top)
		}
	}
}

// entrypoint returns the program of an exec-form ENTRYPOINT.
func entrypoint(t *testing.T, s dockerStage) string {
	t.Helper()
	eps := s.all("ENTRYPOINT")
	if len(eps) != 1 {
		t.Fatalf("stage %s has %d ENTRYPOINTs", s.name, len(eps))
	}
	var argv []string
	if err := json.Unmarshal([]byte(eps[0]), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("stage %s: ENTRYPOINT %s is not in exec form", s.name, eps[0])
	}
	return argv[0]
}

// copiesTo reports whether a COPY --from=<stage> of the stage puts a file
// named base at dest.
func copiesTo(s dockerStage, dest string) bool {
	for _, c := range s.all("COPY") {
		words := strings.Fields(c)
		to := words[len(words)-1]
		for _, src := range words[:len(words)-1] {
			if strings.HasPrefix(src, "--") {
				continue
			}
			if to == dest || (strings.HasSuffix(to, "/") && to+path.Base(src) == dest) {
				return true
			}
		}
	}
	return false
}

// TestDockerImagesMatchThePods: each image runs its program as the
// non-root user the operator's pods use, and the broker's volume is where the
// operator mounts the data.
func TestDockerImagesMatchThePods(t *testing.T) {
	stages := parseDockerfile(t)
	runtime := stageNamed(t, stages, "runtime")
	if !strings.HasPrefix(runtime.base, "gcr.io/distroless/static") {
		t.Errorf("the runtime base %s is not distroless/static", runtime.base)
	}
	users := runtime.all("USER")
	if len(users) != 1 {
		t.Fatalf("the runtime stage sets USER %d times", len(users))
	}
	uid, _, _ := strings.Cut(users[0], ":")
	if n, err := strconv.ParseInt(uid, 10, 64); err != nil || n != resources.DefaultUserID {
		t.Errorf("the images run as %s, the operator's broker pods as %d", users[0], resources.DefaultUserID)
	}
	labels := strings.Join(runtime.all("LABEL"), " ")
	for _, key := range []string{"source", "version", "revision", "licenses"} {
		if !strings.Contains(labels, "org.opencontainers.image."+key+"=") {
			t.Errorf("the images lack the org.opencontainers.image.%s label", key)
		}
	}

	for _, name := range []string{"broker", "operator"} {
		s := stageNamed(t, stages, name)
		if s.base != "runtime" {
			t.Errorf("stage %s is built on %s, not on the runtime stage", name, s.base)
		}
		if ep := entrypoint(t, s); !copiesTo(s, ep) {
			t.Errorf("stage %s runs %s, which no COPY puts there", name, ep)
		}
		if !strings.Contains(strings.Join(s.all("LABEL"), " "), "org.opencontainers.image.title=") {
			t.Errorf("stage %s has no title label", name)
		}
	}

	broker := stageNamed(t, stages, "broker")
	if v := broker.all("VOLUME"); len(v) != 1 || v[0] != resources.DataMountPath {
		t.Errorf("the broker image declares VOLUME %v; the operator mounts the data volume at %s "+
			"(a VOLUME below the mount would hide the claim's data behind an anonymous volume)", v, resources.DataMountPath)
	}
	if env := strings.Join(broker.all("ENV"), " "); !strings.Contains(env, "KAIRO_DATA_DIR="+resources.DataDir) {
		t.Errorf("the broker image's default data directory (%s) is not the operator's %s", env, resources.DataDir)
	}
	if !copiesTo(broker, resources.DataDir) {
		t.Errorf("the broker image does not create %s", resources.DataDir)
	}
}
