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
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/auth"
	"github.com/kairolog/kairolog/controllers/resources"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// secureBroker is a client of one broker's HTTPS API as its users see it:
// trusting the cluster's CA bundle, with a password, a client certificate
// or no credentials.
type secureBroker struct {
	base string
	kc   *kairov1alpha1.KairoCluster
}

// reply is what a user notices of a call: the status, the error code and
// the challenge.
type reply struct {
	status    int
	code      string
	challenge string
	body      []byte
}

// as calls the broker with a client certificate (cert) or HTTP Basic
// (user, password), or neither.
func (b secureBroker) as(cert *tls.Certificate, user, password, method, path string, body any) reply {
	GinkgoHelper()
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(secretOf(b.kc.Namespace, resources.CACertSecretName(b.kc))(Default).Data[resources.CACertKey])).
		To(BeTrue())
	conf := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots,
		ServerName: fmt.Sprintf("%s.%s.svc", b.kc.Name, b.kc.Namespace)}
	if cert != nil {
		conf.Certificates = []tls.Certificate{*cert}
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: conf, DisableKeepAlives: true}}
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, r)
	Expect(err).NotTo(HaveOccurred())
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	return reply{status: resp.StatusCode, code: e.Code, challenge: resp.Header.Get("WWW-Authenticate"), body: raw}
}

// anonymous, withPassword and withCert are as's three kinds of caller.
func (b secureBroker) anonymous(method, path string, body any) reply {
	return b.as(nil, "", "", method, path, body)
}

func (b secureBroker) withPassword(user, password, method, path string, body any) reply {
	return b.as(nil, user, password, method, path, body)
}

func (b secureBroker) withCert(cert tls.Certificate, method, path string, body any) reply {
	return b.as(&cert, "", "", method, path, body)
}

// certOf is the certificate and key in a Secret.
func (b secureBroker) certOf(secret, certKey, keyKey string) tls.Certificate {
	GinkgoHelper()
	s := secretOf(b.kc.Namespace, secret)(Default)
	cert, err := tls.X509KeyPair(s.Data[certKey], s.Data[keyKey])
	Expect(err).NotTo(HaveOccurred())
	return cert
}

// asOperator calls with the operator's own certificate, a superuser.
func (b secureBroker) asOperator(method, path string, body any) reply {
	GinkgoHelper()
	return b.withCert(b.certOf(resources.OperatorCertSecretName(b.kc), resources.TLSCertKey, resources.TLSKeyKey), method, path, body)
}

// putUserCalls is how many PUT /users/{name} the broker has answered, from
// its own metrics.
func (b secureBroker) putUserCalls() int {
	GinkgoHelper()
	r := b.anonymous(http.MethodGet, "/metrics", nil)
	Expect(r.status).To(Equal(http.StatusOK))
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "kairo_http_requests_total{") && strings.Contains(line, `route="put_user"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
			Expect(err).NotTo(HaveOccurred())
			n += int(v)
		}
	}
	return n
}

// secureBrokers runs a KairoCluster of replicas brokers in namespace ns
// whose brokers get their pods' security flags and certificates, and
// points the operator at broker 0 itself (the harness's Service stand-in
// speaks plain HTTP only).
func secureBrokers(ns, name string, replicas int32, security *kairov1alpha1.SecuritySpec,
	config map[string]string) (*kairov1alpha1.KairoCluster, secureBroker, *brokertest.Cluster) {
	GinkgoHelper()
	brokers, err := brokertest.NewCluster(brokertest.Options{Brokers: int(replicas)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(brokers.Close)
	kc := &kairov1alpha1.KairoCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{kairov1alpha1.EndpointOverrideAnnotation: brokers.Endpoint(0)}},
		Spec: kairov1alpha1.KairoClusterSpec{Replicas: replicas, Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi")},
			Security: security, Config: config},
	}
	node := &brokertest.Node{Client: k8sClient, Cluster: brokers, Namespace: ns, Selector: resources.SelectorLabels(kc),
		ClientSecurity: true,
		Logf:           func(format string, args ...any) { fmt.Fprintf(GinkgoWriter, "node: "+format+"\n", args...) }}
	node.Start(ctx)
	DeferCleanup(node.Stop)
	Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, kc))).To(Succeed()) })
	return kc, secureBroker{base: "https://" + strings.TrimPrefix(brokers.Endpoint(0), "http://"), kc: kc}, brokers
}

var _ = Describe("Security on real brokers", Ordered, func() {
	const ns = kcNamespacePrefix + "secure"

	BeforeAll(func() {
		requireControllerManager()
		kcNamespace(ns)
	})

	// secureCluster runs a one-broker KairoCluster (secureBrokers).
	secureCluster := func(name string, security *kairov1alpha1.SecuritySpec) (*kairov1alpha1.KairoCluster, secureBroker) {
		GinkgoHelper()
		kc, broker, _ := secureBrokers(ns, name, 1, security, nil)
		return kc, broker
	}

	newUser := func(kc *kairov1alpha1.KairoCluster, name string, authn kairov1alpha1.UserAuthenticationType, acls ...kairov1alpha1.ACLRule) *kairov1alpha1.KairoUser {
		GinkgoHelper()
		u := &kairov1alpha1.KairoUser{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: kairov1alpha1.KairoUserSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name},
				Authentication: kairov1alpha1.UserAuthentication{Type: authn},
				Authorization:  &kairov1alpha1.UserAuthorization{ACLs: acls}}}
		Expect(k8sClient.Create(ctx, u)).To(Succeed())
		return u
	}
	topicACL := func(topic string, ops ...kairov1alpha1.ACLOperation) kairov1alpha1.ACLRule {
		return kairov1alpha1.ACLRule{Resource: kairov1alpha1.ACLResource{Type: "topic", Name: topic}, Operations: ops}
	}
	expectApplied := func(u *kairov1alpha1.KairoUser) {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			got := get(u)
			g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(condition(got.Status.Conditions, kairov1alpha1.ConditionReady)).To(haveCondition(metav1.ConditionTrue, ReasonUserApplied))
		}).WithTimeout(60 * time.Second).Should(Succeed())
	}
	newTopic := func(kc *kairov1alpha1.KairoCluster, name string) {
		GinkgoHelper()
		t := &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: kairov1alpha1.TopicSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name}, Partitions: 1, Replicas: ptr.To(int32(1))}}
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(get(t).Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60*time.Second).Should(Succeed(), "the Topic controller works with authorization on")
	}
	produce := func(topic string) map[string]any { return map[string]any{"topic": topic, "message": "hello"} }
	fetchPath := func(topic string) string { return "/fetch?topic=" + topic + "&partition=0&offset=0" }

	It("runs brokers with TLS, SCRAM and authorization; users get exactly what their ACLs say, until deleted", func() {
		kc, broker := secureCluster("vault", &kairov1alpha1.SecuritySpec{
			Listeners:     kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationSCRAM}},
			Authorization: &kairov1alpha1.AuthorizationSpec{Enabled: true},
			SuperUsers:    []string{"admin"},
		})

		By("the StatefulSet carrying the flags and the broker serving HTTPS with them")
		Eventually(func(g Gomega) {
			pods := clusterPods(kc)
			g.Expect(pods).To(HaveKey(int32(0)))
			args := pods[0].Spec.Containers[0].Args
			g.Expect(args).To(ContainElements("--http-tls", "--http-authentication=scram-sha-512", "--authorization", "--super-users=admin"))
			g.Expect(pods[0].Spec.Containers[0].ReadinessProbe.HTTPGet.Scheme).To(Equal(corev1.URISchemeHTTPS))
			g.Expect(podReady(ptr.To(pods[0]))).To(BeTrue())
		}).WithTimeout(60 * time.Second).Should(Succeed())

		By("the operator reaching the brokers with its certificate: the cluster is Ready")
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(client.ObjectKeyFromObject(kc)).Status.Conditions, kairov1alpha1.ConditionReady).Status).
				To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		newTopic(kc, "orders")

		By("a SCRAM user with Read on orders")
		billing := kairov1alpha1.ACLRule{Resource: kairov1alpha1.ACLResource{Type: "group", Name: "billing"},
			Operations: []kairov1alpha1.ACLOperation{"Read"}}
		reader := newUser(kc, "reader", kairov1alpha1.UserAuthenticationSCRAM, topicACL("orders", "Read"), billing)
		expectApplied(reader)
		s := secretOf(ns, "reader")(Default)
		password := string(s.Data[UserPasswordKey])
		Expect(password).To(HaveLen(generatedPasswordLength))

		By("the brokers holding the salted credential of the Secret's password, never the password")
		var cred auth.Credential
		Expect(json.Unmarshal([]byte(s.Annotations[SCRAMCredentialAnnotation]), &cred)).To(Succeed())
		Expect(cred.Verify(password)).To(BeTrue())
		r := broker.asOperator(http.MethodGet, "/users/reader", nil)
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		Expect(string(r.body)).NotTo(ContainSubstring(password))
		var view struct {
			SCRAM struct {
				Salt       []byte `json:"salt"`
				Iterations int    `json:"iterations"`
			} `json:"scram"`
			ACLs []auth.ACL `json:"acls"`
		}
		Expect(json.Unmarshal(r.body, &view)).To(Succeed())
		Expect(view.SCRAM.Salt).To(Equal(cred.Salt))
		Expect(view.ACLs).To(ConsistOf(
			SatisfyAll(HaveField("Resource", auth.ResourceTopic), HaveField("Operations", ConsistOf(auth.OpRead))),
			SatisfyAll(HaveField("Resource", auth.ResourceGroup), HaveField("Name", "billing"), HaveField("Pattern", auth.PatternLiteral),
				HaveField("Permission", auth.Allow), HaveField("Host", auth.Wildcard))))

		By("no credentials, or a wrong password: 401 with a Basic challenge")
		r = broker.anonymous(http.MethodGet, fetchPath("orders"), nil)
		Expect(r.status).To(Equal(http.StatusUnauthorized), string(r.body))
		Expect(r.challenge).To(HavePrefix("Basic"))
		r = broker.withPassword("reader", password+"x", http.MethodGet, fetchPath("orders"), nil)
		Expect(r.status).To(Equal(http.StatusUnauthorized), string(r.body))

		By("the reader fetching, and refused a produce: 403")
		r = broker.withPassword("reader", password, http.MethodGet, fetchPath("orders"), nil)
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		r = broker.withPassword("reader", password, http.MethodPost, "/produce", produce("orders"))
		Expect(r.status).To(Equal(http.StatusForbidden), string(r.body))
		Expect(r.code).To(Equal("TOPIC_AUTHORIZATION_FAILED"))

		By("the ConsumerGroup controller observing the reader's commit with authorization on")
		cg := &kairov1alpha1.ConsumerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "billing"},
			Spec: kairov1alpha1.ConsumerGroupSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name}, Topics: []string{"orders"}}}
		Expect(k8sClient.Create(ctx, cg)).To(Succeed())
		Expect(broker.asOperator(http.MethodPost, "/produce", produce("orders")).status).To(Equal(http.StatusOK))
		r = broker.withPassword("reader", password, http.MethodPost, "/offsets/commit",
			map[string]any{"group": "billing", "topic": "orders", "partition": 0, "offset": 1})
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		Eventually(func(g Gomega) {
			got := get(cg)
			g.Expect(condition(got.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(got.Status.Offsets).To(ContainElement(SatisfyAll(HaveField("Topic", "orders"), HaveField("CommittedOffset", int64(1)))))
		}).WithTimeout(60*time.Second).Should(Succeed(), "the ConsumerGroup controller works with authorization on")

		By("nothing written to the brokers while nothing changes")
		puts := broker.putUserCalls()
		Expect(puts).To(BeNumerically(">=", 1))
		Consistently(broker.putUserCalls).WithTimeout(2*userResync + time.Second).WithPolling(time.Second).Should(Equal(puts))

		By("an ACL change reaching the brokers: the reader may now produce")
		Expect(update(reader, func(u *kairov1alpha1.KairoUser) {
			u.Spec.Authorization.ACLs = []kairov1alpha1.ACLRule{topicACL("orders", "Read", "Write")}
		})).To(Succeed())
		expectApplied(reader)
		Eventually(func() int {
			return broker.withPassword("reader", password, http.MethodPost, "/produce", produce("orders")).status
		}).WithTimeout(20 * time.Second).Should(Equal(http.StatusOK))
		Expect(broker.putUserCalls()).To(Equal(puts + 1))
		expectEvent(ns, "reader", ReasonUserApplied)

		By("deleting the KairoUser removing the user from the brokers")
		Expect(k8sClient.Delete(ctx, reader)).To(Succeed())
		expectGone(reader, 30*time.Second)
		Expect(broker.asOperator(http.MethodGet, "/users/reader", nil).status).To(Equal(http.StatusNotFound))
		Expect(broker.withPassword("reader", password, http.MethodGet, fetchPath("orders"), nil).status).To(Equal(http.StatusUnauthorized))
	})

	It("authenticates certificate users by their common name", func() {
		kc, broker := secureCluster("certs", &kairov1alpha1.SecuritySpec{
			Listeners:     kairov1alpha1.ListenersSecurity{HTTP: &kairov1alpha1.ListenerSecurity{TLS: true, Authentication: kairov1alpha1.AuthenticationTLS}},
			Authorization: &kairov1alpha1.AuthorizationSpec{Enabled: true},
		})
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(client.ObjectKeyFromObject(kc)).Status.Conditions, kairov1alpha1.ConditionReady).Status).
				To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())
		newTopic(kc, "audit")

		writer := newUser(kc, "writer", kairov1alpha1.UserAuthenticationTLS, topicACL("audit", "Write"))
		expectApplied(writer)
		r := broker.asOperator(http.MethodGet, "/users/writer", nil)
		Expect(r.status).To(Equal(http.StatusOK), string(r.body))
		Expect(string(r.body)).To(ContainSubstring(`"mechanisms":[]`), "a certificate user has no SCRAM credential")

		cert := broker.certOf("writer", UserCertKey, UserKeyKey)
		Expect(broker.withCert(cert, http.MethodPost, "/produce", produce("audit")).status).To(Equal(http.StatusOK))
		r = broker.withCert(cert, http.MethodGet, fetchPath("audit"), nil)
		Expect(r.status).To(Equal(http.StatusForbidden), string(r.body))
		Expect(r.code).To(Equal("TOPIC_AUTHORIZATION_FAILED"))
		Expect(broker.anonymous(http.MethodPost, "/produce", produce("audit")).status).To(Equal(http.StatusUnauthorized))

		Expect(k8sClient.Delete(ctx, writer)).To(Succeed())
		expectGone(writer, 30*time.Second)
		r = broker.withCert(cert, http.MethodPost, "/produce", produce("audit"))
		Expect(r.status).To(Equal(http.StatusForbidden), "a deleted certificate user has no ACLs left: %s", r.body)
	})

	It("rolls a running cluster onto HTTP TLS and off again one broker at a time; producers lose nothing acknowledged", func() {
		kc, _, brokers := secureBrokers(ns, "rolling", 3, nil, map[string]string{"min.insync.replicas": "2"})
		key := client.ObjectKeyFromObject(kc)
		Eventually(func(g Gomega) {
			g.Expect(condition(getCluster(key).Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(90 * time.Second).Should(Succeed())
		t := &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "events"},
			Spec: kairov1alpha1.TopicSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: kc.Name}, Partitions: 1, Replicas: ptr.To(int32(3))}}
		Expect(k8sClient.Create(ctx, t)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(condition(get(t).Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(60 * time.Second).Should(Succeed())

		roots := x509.NewCertPool()
		Expect(roots.AppendCertsFromPEM(secretOf(ns, resources.CACertSecretName(kc))(Default).Data[resources.CACertKey])).To(BeTrue())
		var hosts []string
		for i := 0; i < 3; i++ {
			hosts = append(hosts, strings.TrimPrefix(brokers.Endpoint(i), "http://"))
		}
		tlsClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12, RootCAs: roots, ServerName: fmt.Sprintf("%s.%s.svc", kc.Name, ns)}}}
		var producers []*recordProducer

		// roll turns HTTP TLS on or off under two acks=all producers writing
		// to the three brokers in turn, one on http://, one on https://,
		// and waits for every broker to have restarted once, never two
		// down at once. The producer of the scheme the brokers no longer
		// (or not yet) speak is refused by every broker afterwards (before).
		roll := func(on bool) {
			GinkgoHelper()
			before := clusterPods(kc)
			phase, wantAnnotation := "off", ""
			if on {
				phase, wantAnnotation = "on", "true"
			}
			plain := startRecordProducer("plain-"+phase, "http://", hosts, &http.Client{Timeout: 10 * time.Second})
			secure := startRecordProducer("tls-"+phase, "https://", hosts, tlsClient)
			producers = append(producers, plain, secure)
			DeferCleanup(plain.stop)
			DeferCleanup(secure.stop)
			old, current := plain, secure
			if !on {
				old, current = secure, plain
			}
			Eventually(old.ackedCount).WithTimeout(10*time.Second).Should(BeNumerically(">", 0), "the %s producer works before the roll", phase)

			monitor := startPodMonitor(kc, 3, func(id int32) bool { return brokers.Ready(int(id)) })
			updateCluster(key, func(kc *kairov1alpha1.KairoCluster) {
				kc.Spec.Security = nil
				if on {
					kc.Spec.Security = &kairov1alpha1.SecuritySpec{Listeners: kairov1alpha1.ListenersSecurity{
						HTTP: &kairov1alpha1.ListenerSecurity{TLS: true}}}
				}
			})
			Eventually(func(g Gomega) {
				pods := clusterPods(kc)
				g.Expect(pods).To(HaveLen(3))
				for id, p := range pods {
					g.Expect(p.UID).NotTo(Equal(before[id].UID))
					g.Expect(p.Annotations[resources.HTTPTLSAnnotation]).To(Equal(wantAnnotation))
				}
				kc := getCluster(key)
				g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionProgressing)).To(haveCondition(metav1.ConditionFalse, ReasonUpToDate))
				g.Expect(condition(kc.Status.Conditions, kairov1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			}).WithTimeout(240 * time.Second).WithPolling(time.Second).Should(Succeed())
			seen := monitor.finish()
			Expect(seen.maxDown).To(Equal(1), "two brokers were down at once: %s", seen.downAt)
			Expect(seen.replaced).To(HaveLen(3))

			mark, refused := current.ackedCount(), old.refusedCount()
			Eventually(current.ackedCount).WithTimeout(10 * time.Second).Should(BeNumerically(">", mark))
			Eventually(old.refusedCount).WithTimeout(10 * time.Second).Should(BeNumerically(">", refused))
			plain.stop()
			secure.stop()
			logFigure("HTTP TLS turned %s by a rolling restart of 3 brokers: plain producer %d acknowledged, %d refused; TLS producer %d acknowledged, %d refused",
				phase, len(plain.acked), plain.refusedCount(), len(secure.acked), secure.refusedCount())
		}

		By("turning HTTP TLS on: the brokers restart one at a time, the operator reaching the mixed cluster")
		roll(true)
		for _, h := range hosts {
			resp, err := http.Post("http://"+h+"/produce", "application/json", strings.NewReader(`{"topic":"events","message":"x"}`))
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP to %s after the roll", h)
		}
		By("turning it off again the same way")
		roll(false)

		By("every acknowledged record in the topic, once")
		resp, err := http.Get("http://" + hosts[0] + "/fetch?topic=events&partition=0&offset=0&max_records=100000")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		var fetched struct {
			Records []struct {
				Message string `json:"message"`
			} `json:"records"`
		}
		Expect(json.NewDecoder(resp.Body).Decode(&fetched)).To(Succeed())
		stored := map[string]int{}
		for _, rec := range fetched.Records {
			stored[rec.Message]++
		}
		acked, lost := 0, 0
		for _, p := range producers {
			for _, m := range p.acked {
				acked++
				if stored[m] != 1 {
					lost++
				}
			}
		}
		logFigure("HTTP TLS on and off again by rolling restarts: %d acknowledged records, %d of them missing or duplicated, %d stored",
			acked, lost, len(fetched.Records))
		Expect(lost).To(BeZero())
	})

	It("refuses authorization without TLS on the HTTP listener, where the operator authenticates", func() {
		kc := &kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "open"},
			Spec: kairov1alpha1.KairoClusterSpec{Replicas: 1, Storage: kairov1alpha1.StorageSpec{Size: resource.MustParse("1Gi")},
				Security: &kairov1alpha1.SecuritySpec{Authorization: &kairov1alpha1.AuthorizationSpec{Enabled: true}}}}
		Expect(k8sClient.Create(ctx, kc)).To(MatchError(ContainSubstring("authorization needs tls: true on the HTTP listener")))
	})
})

// recordProducer sends one acks=all record at a time to each broker in
// turn and remembers what was acknowledged and how much was refused.
type recordProducer struct {
	mu      sync.Mutex
	acked   []string
	refused int
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

func startRecordProducer(tag, scheme string, hosts []string, hc *http.Client) *recordProducer {
	p := &recordProducer{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer GinkgoRecover()
		defer p.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-p.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			msg := fmt.Sprintf("%s-%d", tag, i)
			body, _ := json.Marshal(map[string]any{"topic": "events", "partition": 0, "message": msg, "acks": "all"})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, scheme+hosts[i%len(hosts)]+"/produce", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			p.mu.Lock()
			if ok {
				p.acked = append(p.acked, msg)
			} else {
				p.refused++
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *recordProducer) stop() {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
}

func (p *recordProducer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

func (p *recordProducer) refusedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}
