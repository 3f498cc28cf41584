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
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

var httpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

// normalizeRoute turns "GET /groups/{g}/offsets?group=" into
// "GET /groups/{}/offsets": no query, wildcards unnamed.
func normalizeRoute(method, path string) string {
	path, _, _ = strings.Cut(path, "?")
	path = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "{}")
	return method + " " + path
}

// brokerRoutes reads the route table of broker/httpapi from its source: the
// server keeps its routes in an unexported map and offers no way to list
// them, so the test parses every s.handle("METHOD /path", …) call (and
// s.handleOps, the routes that answer without waiting for the metadata).
func brokerRoutes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	dir := filepath.Join(repoRoot, "broker", "httpapi")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "handle" && sel.Sel.Name != "handleOps") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: a route whose pattern is not a literal: %s", fset.Position(call.Pos()), exprString(call.Args[0]))
				return true
			}
			pattern, _ := strconv.Unquote(lit.Value)
			method, path, ok := strings.Cut(pattern, " ")
			if !ok {
				method, path = "", pattern
			}
			if strings.HasPrefix(path, "/internal/") {
				return true // broker to broker; documented as not for clients
			}
			routes = append(routes, normalizeRoute(method, path))
			return true
		})
	}
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in broker/httpapi; has the route table moved?", len(routes))
	}
	sort.Strings(routes)
	return routes
}

func exprString(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "an expression"
}

var (
	// "### `POST /topics` — create"
	endpointHeading = regexp.MustCompile("^#+ `(" + strings.Join(httpMethods, "|") + ") (/[^`]*)`")
	// "`PATCH` with the same body" in an endpoint's section
	bareMethod = regexp.MustCompile("`(" + strings.Join(httpMethods, "|") + ")`")
	// "`GET /metrics`" anywhere
	inlineEndpoint = regexp.MustCompile("`(" + strings.Join(httpMethods, "|") + ") (/[^` ]*)`")
)

// documentedEndpoints reads docs/api.md: endpoint headings, table rows whose
// first cell is a method and second a path, "`METHOD /path`" in the text, and
// a bare "`METHOD`" inside an endpoint's section, which names another method
// of that section's path.
func documentedEndpoints(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	section := ""
	inCode := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if strings.HasPrefix(line, "#") {
			section = ""
			if m := endpointHeading.FindStringSubmatch(line); m != nil {
				seen[normalizeRoute(m[1], m[2])] = true
				section = m[2]
			}
			continue
		}
		if cells := strings.Split(line, "|"); len(cells) > 3 && strings.HasPrefix(line, "|") {
			method := strings.TrimSpace(cells[1])
			path := strings.Trim(strings.TrimSpace(cells[2]), "`")
			if slices.Contains(httpMethods, method) && strings.HasPrefix(path, "/") {
				seen[normalizeRoute(method, path)] = true
			}
			continue
		}
		for _, m := range inlineEndpoint.FindAllStringSubmatch(line, -1) {
			seen[normalizeRoute(m[1], m[2])] = true
		}
		if section != "" {
			for _, m := range bareMethod.FindAllStringSubmatch(line, -1) {
				seen[normalizeRoute(m[1], section)] = true
			}
		}
	}
	var out []string
	for r := range seen {
		// Broker-to-broker paths are documented as not for clients, and the
		// route table leaves them out too.
		if _, path, _ := strings.Cut(r, " "); strings.HasPrefix(path, "/internal/") {
			continue
		}
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// TestAPIDocsMatchTheRoutes: every endpoint docs/api.md describes is routed
// by the broker, and every public route is described.
func TestAPIDocsMatchTheRoutes(t *testing.T) {
	routes := brokerRoutes(t)
	docs := documentedEndpoints(t)
	t.Logf("%d public routes, %d documented endpoints", len(routes), len(docs))
	for _, r := range routes {
		if !slices.Contains(docs, r) {
			t.Errorf("the broker routes %s, which docs/api.md does not document", r)
		}
	}
	for _, d := range docs {
		if !slices.Contains(routes, d) {
			t.Errorf("docs/api.md documents %s, which the broker does not route", d)
		}
	}
}

// crdFieldPaths lists every spec and status field path of every CRD, items
// of lists as "[]", as docs/crd-reference.md writes them.
func crdFieldPaths(t *testing.T) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, s apiextensionsv1.JSONSchemaProps)
	walk = func(prefix string, s apiextensionsv1.JSONSchemaProps) {
		for name, p := range s.Properties {
			path := prefix + name
			paths[path] = true
			walk(path+".", p)
			if p.Items != nil && p.Items.Schema != nil {
				paths[path+"[]"] = true
				walk(path+"[].", *p.Items.Schema)
			}
		}
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			walk("", *v.Schema.OpenAPIV3Schema)
		}
	}
	return paths
}

// handWrittenDocs are the pages whose references to fields, make targets and
// chart values this test checks (docs/crd-reference.md is generated).
var handWrittenDocs = []string{
	filepath.Join("docs", "architecture.md"),
	filepath.Join("docs", "operations.md"),
	filepath.Join("charts", "kairolog-operator", "README.md"),
}

var (
	fieldRef  = regexp.MustCompile("`((?:spec|status)\\.[A-Za-z0-9.\\[\\]]+)`")
	makeRef   = regexp.MustCompile("`make ([a-z0-9-]+)")
	valuesRef = regexp.MustCompile("--set '?([a-zA-Z.]+)=")
)

// TestDocsReferToWhatExists: every resource field (`spec.…`, `status.…`), make
// target and chart value (`--set x=`) the hand-written docs mention exists.
func TestDocsReferToWhatExists(t *testing.T) {
	fields := crdFieldPaths(t)
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	vy, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(vy, &values); err != nil {
		t.Fatal(err)
	}
	for _, doc := range handWrittenDocs {
		raw, err := os.ReadFile(filepath.Join(repoRoot, doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range fieldRef.FindAllStringSubmatch(text, -1) {
			if !fields[strings.TrimSuffix(m[1], ".")] {
				t.Errorf("%s mentions %s, which no CRD has", doc, m[1])
			}
		}
		for _, m := range makeRef.FindAllStringSubmatch(text, -1) {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m[1]) + `:`).Match(makefile) {
				t.Errorf("%s mentions `make %s`, which the Makefile does not define", doc, m[1])
			}
		}
		for _, m := range valuesRef.FindAllStringSubmatch(text, -1) {
			if _, ok := lookup(values, m[1]); !ok {
				t.Errorf("%s sets the chart value %s, which values.yaml does not have", doc, m[1])
			}
		}
	}
}

// TestOperationsDocumentsEveryReason: every condition and event reason the
// reconcilers use (the Reason… constants of controllers/conditions.go) is
// explained in docs/operations.md, so a user who meets one in `kubectl
// describe` finds it.
func TestOperationsDocumentsEveryReason(t *testing.T) {
	ops, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "controllers", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^Reason[A-Z]`)
	fset := token.NewFileSet()
	found := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !name.MatchString(id.Name) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					reason, _ := strconv.Unquote(lit.Value)
					found++
					if !strings.Contains(string(ops), "`"+reason+"`") {
						t.Errorf("%s (%s in %s) is not explained in docs/operations.md", reason, id.Name, filepath.Base(path))
					}
				}
			}
		}
	}
	if found < 10 {
		t.Fatalf("found only %d reasons in controllers/; have they moved?", found)
	}
}

// TestBenchmarksTableOfContents: the contents at the top of
// docs/benchmarks.md link every section.
func TestBenchmarksTableOfContents(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		title, ok := strings.CutPrefix(line, "## ")
		if inCode || !ok || title == "Contents" {
			continue
		}
		anchor := githubAnchor(title)
		if !strings.Contains(text, "(#"+anchor+")") {
			t.Errorf("docs/benchmarks.md: the contents do not link section %q (#%s)", title, anchor)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading.
func githubAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestReadmeLinksTheDocs: the README's documentation list links every page
// of docs/, and every link in it resolves.
func TestReadmeLinksTheDocs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		link := "(docs/" + filepath.Base(p) + ")"
		if !strings.Contains(string(readme), link) {
			t.Errorf("README.md does not link docs/%s", filepath.Base(p))
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`).FindAllStringSubmatch(string(readme), -1) {
		if _, err := os.Stat(filepath.Join(repoRoot, m[1])); err != nil {
			t.Errorf("README.md links %s, which does not exist", m[1])
		}
	}
}
