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

package controllers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReasonsAreDeclaredOnce reads the package's source: every condition and
// event reason is a Reason… constant in conditions.go, in UpperCamelCase as
// Kubernetes reasons are, and no two constants hold the same reason, so a
// user filtering `kubectl events` by a documented reason finds it.
func TestReasonsAreDeclaredOnce(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	reasonName := regexp.MustCompile(`^(?i:reason|event)[A-Z]`)
	upperCamel := regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)
	byValue := map[string]string{} // lower-cased reason → constant
	fset := token.NewFileSet()
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
					if !reasonName.MatchString(id.Name) || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					reason, _ := strconv.Unquote(lit.Value)
					if path != "conditions.go" {
						t.Errorf("%s = %q is declared in %s; reasons belong in conditions.go", id.Name, reason, path)
					}
					if !strings.HasPrefix(id.Name, "Reason") {
						t.Errorf("%s = %q: reason constants are named Reason…", id.Name, reason)
					}
					if !upperCamel.MatchString(reason) {
						t.Errorf("%s = %q is not UpperCamelCase", id.Name, reason)
					}
					if other, dup := byValue[strings.ToLower(reason)]; dup {
						t.Errorf("%s = %q repeats %s", id.Name, reason, other)
					}
					byValue[strings.ToLower(reason)] = id.Name
				}
			}
		}
	}
	if len(byValue) < 40 {
		t.Fatalf("found only %d reasons; have they moved out of conditions.go?", len(byValue))
	}
}
