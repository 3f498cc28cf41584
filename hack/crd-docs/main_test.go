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

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceIsCurrent fails when docs/crd-reference.md is not what the
// CRDs in config/crd/bases produce: a field was added, removed or changed
// without `make docs`.
func TestReferenceIsCurrent(t *testing.T) {
	want, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(filepath.Join("../..", output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s is stale; run `make docs`", output)
	}
}

// TestReferenceCoversEveryField: every property of every CRD schema under
// spec and status appears as a row, unless it belongs to a Kubernetes type
// the reference links to.
func TestReferenceCoversEveryField(t *testing.T) {
	doc, err := Generate("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"spec.storage.size", "spec.podTemplate.affinity", "status.brokers[].underReplicated",
		"spec.offsetReset.requestId", "status.offsets[].lag", "spec.partitions"} {
		if !strings.Contains(string(doc), "| `"+path+"` |") {
			t.Errorf("the reference has no row for %s", path)
		}
	}
	if strings.Contains(string(doc), "spec.podTemplate.affinity.nodeAffinity") {
		t.Error("the reference expands a Kubernetes type instead of linking to it")
	}
}
