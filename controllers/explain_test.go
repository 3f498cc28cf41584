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
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// openAPIPublish bounds how long the API server may take to serve a CRD's
// schema to kubectl explain.
const openAPIPublish = 60 * time.Second

// undocumented lists every property path of a schema that has no
// description, which `kubectl explain` would show blank.
func undocumented(path string, schema apiextensionsv1.JSONSchemaProps) []string {
	var missing []string
	for name, prop := range schema.Properties {
		p := path + "." + name
		if prop.Description == "" {
			missing = append(missing, p)
		}
		missing = append(missing, undocumented(p, prop)...)
	}
	if schema.Items != nil && schema.Items.Schema != nil {
		missing = append(missing, undocumented(path+"[]", *schema.Items.Schema)...)
	}
	if schema.AdditionalProperties != nil && schema.AdditionalProperties.Schema != nil {
		missing = append(missing, undocumented(path+"{}", *schema.AdditionalProperties.Schema)...)
	}
	sort.Strings(missing)
	return missing
}

var _ = Describe("API documentation", func() {
	for _, plural := range []string{"kairoclusters", "topics", "consumergroups"} {
		It("describes every field of "+plural, func() {
			Expect(apiextensionsv1.AddToScheme(k8sClient.Scheme())).To(Succeed())
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(k8sClient.Get(ctx, types.NamespacedName{Name: plural + ".kairolog.io"}, crd)).To(Succeed())
			schema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
			Expect(schema.Description).NotTo(BeEmpty())
			// metadata, apiVersion and kind come from Kubernetes itself.
			spec, status := schema.Properties["spec"], schema.Properties["status"]
			Expect(spec.Description).NotTo(BeEmpty())
			Expect(status.Description).NotTo(BeEmpty())
			Expect(undocumented(plural+".spec", spec)).To(BeEmpty())
			Expect(undocumented(plural+".status", status)).To(BeEmpty())
		})
	}

	It("serves the descriptions to kubectl explain", func() {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			Fail("kubectl is required to check kubectl explain: " + err.Error())
		}
		user, err := testEnv.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
		Expect(err).NotTo(HaveOccurred())
		kubeconfig, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(path, kubeconfig, 0o600)).To(Succeed())

		explain := func(field string) string {
			GinkgoHelper()
			var out []byte
			// The API server publishes new CRD schemas to OpenAPI some
			// seconds after they are established, and one kubectl call
			// alone can take seconds on a loaded machine.
			Eventually(func(g Gomega) {
				cmd := exec.Command(kubectl, "--kubeconfig", path, "explain", field)
				out, err = cmd.CombinedOutput()
				g.Expect(err).NotTo(HaveOccurred(), string(out))
			}).WithTimeout(openAPIPublish).WithPolling(time.Second).Should(Succeed())
			return string(out)
		}
		Expect(explain("kairocluster.spec.storage.size")).To(ContainSubstring("never shrink"))
		Expect(explain("topic.spec.partitions")).To(ContainSubstring("can grow but never shrink"))
		Expect(explain("consumergroup.spec.offsetReset")).To(ContainSubstring("while the group has no active members"))
		Expect(explain("kc.status.brokers")).To(ContainSubstring("underReplicated"))
	})
})
