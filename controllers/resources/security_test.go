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

package resources

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// TestNetworkPolicy: the peer and raft ports admit only the cluster's
// brokers; the client ports admit everyone, or with networkPolicyPeers
// only those peers, the brokers and the operator.
func TestNetworkPolicy(t *testing.T) {
	c := testCluster()
	np := build(t, &NetworkPolicyBuilder{testBuilder(t, c)}).(*networkingv1.NetworkPolicy)
	if len(np.Spec.Ingress) != 2 {
		t.Fatalf("%d ingress rules", len(np.Spec.Ingress))
	}
	internal, clients := np.Spec.Ingress[0], np.Spec.Ingress[1]
	if got := ports(internal); !slices.Equal(got, []int32{RaftPort, PeerPort}) {
		t.Errorf("internal ports %v", got)
	}
	if len(internal.From) != 1 || internal.From[0].PodSelector == nil ||
		internal.From[0].PodSelector.MatchLabels[LabelInstance] != "kairo" || internal.From[0].NamespaceSelector != nil {
		t.Errorf("internal ports admit %+v, want the cluster's brokers only", internal.From)
	}
	if got := ports(clients); !slices.Contains(got, HTTPPort) || slices.Contains(got, PeerPort) || slices.Contains(got, RaftPort) {
		t.Errorf("client ports %v", got)
	}
	if len(clients.From) != 0 {
		t.Errorf("client ports admit only %+v, want everyone", clients.From)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policy types %v", np.Spec.PolicyTypes)
	}

	monitoring := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{"kubernetes.io/metadata.name": "apps"}}}
	c.Spec.Security = &kairov1alpha1.SecuritySpec{NetworkPolicyPeers: []networkingv1.NetworkPolicyPeer{monitoring}}
	np = build(t, &NetworkPolicyBuilder{testBuilder(t, c)}).(*networkingv1.NetworkPolicy)
	from := np.Spec.Ingress[1].From
	if len(from) != 3 || from[1].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "apps" ||
		from[2].PodSelector.MatchLabels[LabelName] != "kairolog-operator" {
		t.Errorf("narrowed client ports admit %+v, want the brokers, the peers and the operator", from)
	}
}

func ports(r networkingv1.NetworkPolicyIngressRule) []int32 {
	var out []int32
	for _, p := range r.Ports {
		out = append(out, p.Port.IntVal)
	}
	return out
}

// TestBrokerTLSTemplate: with certificates every broker reads its own
// certificate by its pod name from one projected volume with the CA
// bundle, runs the builder's peer TLS mode, and a new certificate
// generation changes the template hash (a rolling restart).
func TestBrokerTLSTemplate(t *testing.T) {
	c := testCluster()
	plain := testBuilder(t, c)
	b := testBuilder(t, c)
	b.Certificates, b.PeerTLS = "abc-1", "permissive"
	sts := build(t, &StatefulSetBuilder{b}).(*appsv1.StatefulSet)
	args := strings.Join(sts.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--tls-cert-file=/etc/kairolog-tls/$(POD_NAME).crt", "--tls-key-file=/etc/kairolog-tls/$(POD_NAME).key",
		"--tls-ca-file=/etc/kairolog-tls/ca.crt", "--peer-tls=permissive"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %s", args, want)
		}
	}
	var projected []string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Name == TLSVolume {
			for _, src := range v.Projected.Sources {
				projected = append(projected, src.Secret.Name)
			}
		}
	}
	if !slices.Equal(projected, []string{"kairo-broker-certs", "kairo-ca-cert"}) {
		t.Errorf("TLS volume projects %v", projected)
	}
	if sts.Annotations[PeerTLSAnnotation] != "permissive" || sts.Spec.Template.Annotations[CertificatesAnnotation] != "abc-1" {
		t.Errorf("annotations %v / %v", sts.Annotations, sts.Spec.Template.Annotations)
	}
	hash := func(b *Builder) string {
		tmpl, err := b.PodTemplate()
		if err != nil {
			t.Fatal(err)
		}
		return tmpl.Annotations[ConfigHashAnnotation]
	}
	b2 := testBuilder(t, c)
	b2.Certificates, b2.PeerTLS = "abc-2", "permissive"
	if hash(b) == hash(b2) || hash(b) == hash(plain) {
		t.Error("a new certificate generation, or turning TLS on, leaves the pod template hash unchanged")
	}
	plainArgs := strings.Join(build(t, &StatefulSetBuilder{plain}).(*appsv1.StatefulSet).Spec.Template.Spec.Containers[0].Args, " ")
	if strings.Contains(plainArgs, "--tls") {
		t.Errorf("a builder without certificates passes TLS flags: %s", plainArgs)
	}
}

// TestBrokerDNSNames: a broker certificate names the pod through the
// headless Service, the client Service and localhost.
func TestBrokerDNSNames(t *testing.T) {
	names := BrokerDNSNames(testCluster(), 2)
	for _, want := range []string{"kairo-2.kairo-headless.data.svc", "kairo-2.kairo-headless.data.svc.cluster.local",
		"kairo.data.svc", "kairo", "localhost"} {
		if !slices.Contains(names, want) {
			t.Errorf("%v lacks %s", names, want)
		}
	}
}

// TestStatefulSetClientListenerSecurity: spec.security's HTTP TLS,
// authentication, authorization and superUsers become the brokers' flags,
// the probes follow the listener's scheme, and without certificates there
// is no TLS to turn on.
func TestStatefulSetClientListenerSecurity(t *testing.T) {
	tls := func(authn kairov1alpha1.AuthenticationType) *kairov1alpha1.SecuritySpec {
		return &kairov1alpha1.SecuritySpec{Listeners: kairov1alpha1.ListenersSecurity{
			HTTP: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: authn}}}
	}
	full := tls(kairov1alpha1.AuthenticationSCRAM)
	full.Authorization = &kairov1alpha1.AuthorizationSpec{Enabled: true}
	full.SuperUsers = []string{"admin", "ops"}
	kafka := tls(kairov1alpha1.AuthenticationTLS)
	kafka.Listeners.Kafka = &kairov1alpha1.ListenerSecurity{Authentication: kairov1alpha1.AuthenticationSCRAM}
	kafka.Listeners.Gateway = &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationTLS}
	kafkaOnly := &kairov1alpha1.SecuritySpec{Listeners: kairov1alpha1.ListenersSecurity{
		Kafka: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationNone}}}
	cases := []struct {
		name         string
		security     *kairov1alpha1.SecuritySpec
		certificates string
		want         []string
		scheme       corev1.URIScheme
	}{
		{"plain", nil, "abc-1", nil, corev1.URISchemeHTTP},
		{"TLS", tls(""), "abc-1", []string{"--http-tls"}, corev1.URISchemeHTTPS},
		{"TLS, no authentication", tls(kairov1alpha1.AuthenticationNone), "abc-1", []string{"--http-tls"}, corev1.URISchemeHTTPS},
		{"client certificates", tls(kairov1alpha1.AuthenticationTLS), "abc-1",
			[]string{"--http-tls", "--http-authentication=tls"}, corev1.URISchemeHTTPS},
		{"SCRAM, authorization, super users", full, "abc-1",
			[]string{"--http-tls", "--http-authentication=scram-sha-512", "--authorization", "--super-users=admin,ops"}, corev1.URISchemeHTTPS},
		{"Kafka SASL_PLAINTEXT, gateway with client certificates", kafka, "abc-1",
			[]string{"--http-tls", "--http-authentication=tls", "--kafka-authentication=scram-sha-512",
				"--kafka-gateway-tls", "--kafka-gateway-authentication=tls"}, corev1.URISchemeHTTPS},
		{"Kafka TLS only", kafkaOnly, "abc-1", []string{"--kafka-tls"}, corev1.URISchemeHTTP},
		{"no certificates yet", full, "", nil, corev1.URISchemeHTTP},
	}
	securityFlags := []string{"--http-tls", "--http-authentication", "--kafka-tls", "--kafka-authentication",
		"--kafka-gateway-tls", "--kafka-gateway-authentication", "--authorization", "--super-users"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := testCluster()
			c.Spec.Security = tc.security
			c.Spec.Metrics = &kairov1alpha1.MetricsSpec{Enabled: true}
			b := testBuilder(t, c)
			b.Certificates = tc.certificates
			sts := statefulSet(t, b)
			ctr := sts.Spec.Template.Spec.Containers[0]
			var got []string
			for _, a := range ctr.Args {
				for _, f := range securityFlags {
					if a == f || strings.HasPrefix(a, f+"=") {
						got = append(got, a)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("security flags %v, want %v", got, tc.want)
			}
			for _, p := range []*corev1.Probe{ctr.StartupProbe, ctr.LivenessProbe, ctr.ReadinessProbe} {
				if p.HTTPGet.Scheme != tc.scheme {
					t.Errorf("probe %s scheme %s, want %s", p.HTTPGet.Path, p.HTTPGet.Scheme, tc.scheme)
				}
			}
			ann := sts.Spec.Template.Annotations
			https := tc.scheme == corev1.URISchemeHTTPS
			if (ann[HTTPTLSAnnotation] == "true") != https {
				t.Errorf("%s = %q with scheme %s", HTTPTLSAnnotation, ann[HTTPTLSAnnotation], tc.scheme)
			}
			if https && ann["prometheus.io/scheme"] != "https" {
				t.Errorf("metrics scrape scheme %q over TLS", ann["prometheus.io/scheme"])
			}
			if tc.certificates != "" && !slices.Contains(ctr.Args, "--tls-cert-file="+TLSMountDir+"/$(POD_NAME).crt") {
				t.Errorf("args %v lack the certificate the listeners serve", ctr.Args)
			}
		})
	}
}

// TestSecurityChangeRollsTheBrokers: any change of the client listeners'
// security changes the pod template hash, which is what makes the
// operator restart the brokers one at a time.
func TestSecurityChangeRollsTheBrokers(t *testing.T) {
	hash := func(s *kairov1alpha1.SecuritySpec) string {
		c := testCluster()
		c.Spec.Security = s
		b := testBuilder(t, c)
		b.Certificates = "abc-1"
		return statefulSet(t, b).Spec.Template.Annotations[ConfigHashAnnotation]
	}
	seen := map[string]string{}
	for name, s := range map[string]*kairov1alpha1.SecuritySpec{
		"none":          nil,
		"tls":           {Listeners: kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true}}},
		"authorization": {Listeners: kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true}}, Authorization: &kairov1alpha1.AuthorizationSpec{Enabled: true}},
		"super users":   {Listeners: kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true}}, SuperUsers: []string{"admin"}},
		"kafka tls":     {Listeners: kairov1alpha1.ListenersSecurity{Kafka: &kairov1alpha1.ListenerSecurity{TLS: true}}},
		"gateway scram": {Listeners: kairov1alpha1.ListenersSecurity{Gateway: &kairov1alpha1.ListenerSecurity{Authentication: kairov1alpha1.AuthenticationSCRAM}}},
	} {
		h := hash(s)
		if other, dup := seen[h]; dup {
			t.Errorf("%s and %s give the same template hash %s", name, other, h)
		}
		seen[h] = name
	}
}
