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
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// jsonSchema is the part of values.schema.json this test walks.
type jsonSchema struct {
	Ref        string                 `json:"$ref"`
	Type       any                    `json:"type"`
	Properties map[string]*jsonSchema `json:"properties"`
}

// kubernetesTypes are values passed through as Kubernetes types, whose schema
// lists the type's fields to catch typos early.
var kubernetesTypes = map[string]bool{"resources": true}

// TestValuesMatchTheSchema: every value in values.yaml is described by
// values.schema.json, and the schema describes no value that values.yaml
// does not show with its default.
func TestValuesMatchTheSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		jsonSchema
		Definitions map[string]*jsonSchema `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	resolve := func(s *jsonSchema) *jsonSchema {
		if name, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
			return root.Definitions[name]
		}
		return s
	}
	vy, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(vy, &values); err != nil {
		t.Fatal(err)
	}

	var walk func(path string, v map[string]any, s *jsonSchema)
	walk = func(path string, v map[string]any, s *jsonSchema) {
		for key, val := range v {
			p := path + key
			prop, ok := s.Properties[key]
			if !ok {
				t.Errorf("values.yaml sets %s, which values.schema.json does not describe", p)
				continue
			}
			prop = resolve(prop)
			if sub, isMap := val.(map[string]any); isMap && prop.Properties != nil {
				walk(p+".", sub, prop)
			}
		}
		if kubernetesTypes[strings.TrimSuffix(path, ".")] {
			return // the schema names the Kubernetes type's fields; values.yaml sets some
		}
		for key := range s.Properties {
			if path == "" && key == "global" {
				continue
			}
			if _, ok := v[key]; !ok {
				t.Errorf("values.schema.json describes %s%s, which values.yaml does not set", path, key)
			}
		}
	}
	walk("", values, &root.jsonSchema)
}

// TestChartReadmeDocumentsEveryValue: the README's values table (written by
// `make chart-sync`) names every value, and no value that does not exist.
func TestChartReadmeDocumentsEveryValue(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
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
	var documented []string
	for _, line := range strings.Split(string(readme), "\n") {
		if rest, ok := strings.CutPrefix(line, "| `"); ok {
			key, _, _ := strings.Cut(rest, "`")
			documented = append(documented, key)
		}
	}
	if len(documented) == 0 {
		t.Fatal("the chart README has no values table")
	}
	for _, key := range documented {
		if _, ok := lookup(values, key); !ok {
			t.Errorf("the chart README documents %s, which values.yaml does not set", key)
		}
	}
	var leaves func(prefix string, m map[string]any)
	leaves = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := prefix + k
			if slices.Contains(documented, p) {
				continue
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				leaves(p+".", sub)
				continue
			}
			t.Errorf("the chart README does not document %s", p)
		}
	}
	leaves("", values)
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}
