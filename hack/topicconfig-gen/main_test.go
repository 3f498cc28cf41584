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

	"github.com/kairolog/kairolog/broker/topicconfig"
)

// TestGeneratedFilesAreCurrent fails when the Topic CRD's rules or the
// docs' table are not what the table of topic config keys gives: the
// table changed without `make manifests`.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for path, gen := range map[string]func(string) ([]byte, error){goOutput: GoFile, docsOutput: Docs} {
		want, err := gen("../..")
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is stale; run `make manifests`", path)
		}
	}
}

// TestTheCRDCarriesEveryRule: the CRD that `make manifests` built holds
// every rule, so the API server enforces the table (the envtest spec
// "agrees with the brokers on every topic config value" asks it).
func TestTheCRDCarriesEveryRule(t *testing.T) {
	crd, err := os.ReadFile("../../config/crd/bases/kairolog.io_topics.yaml")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(string(crd)), " ")
	for _, r := range Rules() {
		if !strings.Contains(flat, strings.Join(strings.Fields(r.Message), " ")) {
			t.Errorf("the Topic CRD lacks the rule %q", r.Message)
		}
	}
	if got := len(Rules()); got != len(topicconfig.Keys)+1 {
		t.Errorf("%d rules for %d keys", got, len(topicconfig.Keys))
	}
}
