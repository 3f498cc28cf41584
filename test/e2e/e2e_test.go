package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

const (
	releaseNS   = "kairolog-system"
	releaseName = "kairolog-operator"
	ns          = "streaming" // the namespace of docs/operations.md
	clusterName = "kairo"     // config/samples' KairoCluster
	topicName   = "orders"
	partitions  = 6
	groupName   = "analytics-workers" // config/samples' ConsumerGroup
	auditTopic  = "audit"
)

// topicManifest is the Topic of scenario 3: six partitions, each on all
// three brokers, two in sync needed for acks=all.
const topicManifest = `apiVersion: kairolog.io/v1alpha1
kind: Topic
metadata:
  name: orders
spec:
  clusterRef:
    name: kairo
  partitions: 6
  replicas: 3
  config:
    min.insync.replicas: "2"
`

// auditManifest is a topic created after the scale up, so the new broker
// holds replicas that the scale down has to move away.
const auditManifest = `apiVersion: kairolog.io/v1alpha1
kind: Topic
metadata:
  name: audit
spec:
  clusterRef:
    name: kairo
  partitions: 4
  replicas: 3
  config:
    min.insync.replicas: "2"
`

var _ = Describe("KairoLog installed with helm, used with kubectl", Ordered, func() {
	var (
		pf *portForward
		// acked is every record acknowledged with acks=all on orders so
		// far; each fault scenario reads all of them back.
		acked []ackedRecord
	)

	AfterEach(func() {
		if CurrentSpecReport().Failed() {
			dumpDiagnostics()
		}
	})

	It("1. installs the operator from the chart; it becomes Ready and holds the leader lease", func(ctx SpecContext) {
		// The chart README's local-build install, with a shorter resync so
		// observed status (consumer lag) is fresh within seconds.
		_, err := helm(ctx, "install", releaseName, "charts/kairolog-operator",
			"--namespace", releaseNS, "--create-namespace",
			"--set", "image.tag=dev", "--set", "brokerImage.tag=dev",
			"--set", "resyncInterval=10s")
		Expect(err).NotTo(HaveOccurred())
		mustKubectl(ctx, "-n", releaseNS, "rollout", "status", "deployment/"+releaseName, "--timeout=180s")

		pod := operatorPod(ctx)
		Expect(podReady(pod)).To(BeTrue(), "operator pod %s is not Ready", pod.Name)
		// Pulled from the cluster's registry: the image ID is a digest.
		Expect(mustKubectl(ctx, "-n", releaseNS, "get", "pod", pod.Name, "-o", "jsonpath={..imageID}")).
			To(MatchRegexp(`^docker\.io/kairolog/operator@sha256:[0-9a-f]{64}$`))
		Eventually(func(g Gomega) {
			lease := &coordinationv1.Lease{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: "kairolog-operator.kairolog.io"}, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
			g.Expect(*lease.Spec.HolderIdentity).To(HavePrefix(pod.Name+"_"), "the lease is held by the operator pod")
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		for _, crd := range []string{"kairoclusters.kairolog.io", "topics.kairolog.io", "consumergroups.kairolog.io"} {
			c := &apiextensionsv1.CustomResourceDefinition{}
			Expect(s.k8s.Get(ctx, client.ObjectKey{Name: crd}, c)).To(Succeed())
			Expect(crdEstablished(c)).To(BeTrue(), "CRD %s is not Established", crd)
		}
		Expect(mustKubectl(ctx, "explain", "kairocluster.spec.replicas")).To(ContainSubstring("replicas"))
	}, SpecTimeout(3*time.Minute))

	It("2. runs a 3-broker KairoCluster applied with kubectl", func(ctx SpecContext) {
		mustKubectl(ctx, "create", "namespace", ns)
		mustKubectl(ctx, "-n", ns, "apply", "-f", "config/samples/kairolog_v1alpha1_kairocluster.yaml")

		Eventually(func(g Gomega) {
			for i := range 3 {
				pvc := &corev1.PersistentVolumeClaim{}
				g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("data-%s-%d", clusterName, i)}, pvc)).To(Succeed())
				g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound), "claim %s", pvc.Name)
			}
			for _, name := range []string{clusterName, clusterName + "-headless"} {
				g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Service{})).To(Succeed())
			}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-config"}, &corev1.ConfigMap{})).To(Succeed())
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, &policyv1.PodDisruptionBudget{})).To(Succeed())
			secret := &corev1.Secret{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-peer-secret"}, secret)).To(Succeed())
			g.Expect(secret.OwnerReferences).To(ContainElement(HaveField("Name", clusterName)))
			g.Expect(secret.Data).To(HaveKeyWithValue("secret", HaveLen(64)))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

		mustKubectl(ctx, "-n", ns, "wait", "kc/"+clusterName, "--for=condition=Ready", "--timeout=240s")
		kc := waitClusterReady(ctx, 3, 2*time.Minute)
		Expect(kc.Status.ControllerID).NotTo(BeNil())
		Expect(*kc.Status.ControllerID).To(BeElementOf(int32(0), int32(1), int32(2)))
		Expect(kc.Status.ClientEndpoint).To(Equal(fmt.Sprintf("%s.%s.svc:8080", clusterName, ns)))
		for _, p := range brokerPods(ctx) {
			Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
			// The brokers formed a cluster with the secret the operator
			// mounted: each pod has it at --peer-secret-file.
			Expect(p.Spec.Volumes).To(ContainElement(HaveField("VolumeSource.Secret.SecretName", clusterName+"-peer-secret")), "pod %s", p.Name)
			Expect(p.Spec.Containers[0].VolumeMounts).To(ContainElement(SatisfyAll(
				HaveField("MountPath", "/etc/kairolog-peer"), HaveField("ReadOnly", true))), "pod %s", p.Name)
			Expect(p.Spec.Containers[0].Args).To(ContainElement("--peer-secret-file=/etc/kairolog-peer/secret"), "pod %s", p.Name)
		}
		// Every broker runs the pulled broker image, as its user 65532
		// with the operator's read-only root.
		ids := strings.Fields(mustKubectl(ctx, "-n", ns, "get", "pods", "-l", "app.kubernetes.io/instance="+clusterName+",app.kubernetes.io/component=broker", "-o", "jsonpath={..imageID}"))
		Expect(ids).To(HaveLen(3))
		for _, id := range ids {
			Expect(id).To(MatchRegexp(`^docker\.io/kairolog/broker@sha256:[0-9a-f]{64}$`))
		}
		say("cluster ready: controller %d, brokers %s, image %s", *kc.Status.ControllerID, brokersLine(kc), ids[0])
	}, SpecTimeout(4*time.Minute))

	It("3. creates a Topic with 6 partitions and 3 replicas, a leader for every partition", func(ctx SpecContext) {
		Expect(kubectlApply(ctx, ns, topicManifest)).To(Succeed())
		mustKubectl(ctx, "-n", ns, "wait", "kt/"+topicName, "--for=condition=Ready", "--timeout=120s")
		t := waitTopicHealthy(ctx, topicName, partitions, 3, time.Minute)
		Expect(t.Status.TopicID).NotTo(BeEmpty())
		Expect(t.Status.TopicName).To(Equal(topicName))
	}, SpecTimeout(2*time.Minute))

	It("4. produces and fetches over HTTP through kubectl port-forward to the client Service", func(ctx SpecContext) {
		pf = startPortForward(ns, "svc/"+clusterName, 8080)

		// README.md, "Two commands":
		//   curl -s -X POST localhost:8080/produce -d '{"topic":"orders","partition":0,"message":"hello"}'
		//   curl -s 'localhost:8080/fetch?topic=orders&partition=0&offset=0'
		b, err := httpPost(pf.URL()+"/produce", `{"topic":"orders","partition":0,"message":"hello"}`)
		Expect(err).NotTo(HaveOccurred())
		var reply produceReply
		Expect(json.Unmarshal(b, &reply)).To(Succeed())
		Expect(reply.Status).To(Equal("stored"))
		Expect(reply.Partition).To(HaveValue(BeEquivalentTo(0)))
		Expect(reply.Offset).To(HaveValue(BeEquivalentTo(0)), "the first record of partition 0")
		acked = append(acked, ackedRecord{Value: "hello", Partition: 0, Offset: 0})
		fetches := 0
		Eventually(func(g Gomega) {
			// acks=1 answers before the followers copy the record, and
			// consumers read below the high watermark only.
			var f struct {
				Topic     string          `json:"topic"`
				Partition int32           `json:"partition"`
				Records   []fetchedRecord `json:"records"`
			}
			fetches++
			g.Expect(getJSON(pf.URL()+"/fetch?topic=orders&partition=0&offset=0", &f)).To(Succeed())
			g.Expect(f.Topic).To(Equal(topicName))
			g.Expect(f.Partition).To(BeEquivalentTo(0))
			g.Expect(f.Records).To(HaveLen(1))
			g.Expect(f.Records[0]).To(Equal(fetchedRecord{Offset: 0, Message: "hello"}))
		}).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
		say("the README's fetch returned the record after %d request(s)", fetches)

		// docs/operations.md, "Create a cluster": a keyed record with
		// acks=all, fetched at the partition and offset the reply names.
		//   curl -s -X POST localhost:8080/produce -d '{"topic":"orders","key":"user-1","value":"hello","acks":"all"}'
		b, err = httpPost(pf.URL()+"/produce", `{"topic":"orders","key":"user-1","value":"hello","acks":"all"}`)
		Expect(err).NotTo(HaveOccurred())
		reply = produceReply{}
		Expect(json.Unmarshal(b, &reply)).To(Succeed())
		Expect(reply.Status).To(Equal("stored"))
		Expect(reply.Partition).NotTo(BeNil())
		Expect(reply.Offset).NotTo(BeNil())
		acked = append(acked, ackedRecord{Value: "hello", Partition: *reply.Partition, Offset: *reply.Offset})
		var f fetchReply
		Expect(getJSON(fmt.Sprintf("%s/fetch?topic=orders&partition=%d&offset=%d", pf.URL(), *reply.Partition, *reply.Offset), &f)).To(Succeed())
		Expect(f.Records).NotTo(BeEmpty(), "acks=all: the record is below the high watermark when acknowledged")
		Expect(f.Records[0]).To(Equal(fetchedRecord{Offset: *reply.Offset, Message: "hello", Key: "user-1"}))

		// The broker-to-broker operations are not on the client port, and
		// the peer port speaks mutual TLS with broker certificates of the
		// cluster CA only: a plain request is answered by the TLS server
		// itself (400, nothing runs), and a TLS client without a broker
		// certificate does not get past the handshake.
		var ae *apiError
		_, err = httpPost(pf.URL()+"/internal/controller/delete-topic", `{"name":"orders"}`)
		Expect(errors.As(err, &ae)).To(BeTrue(), "delete-topic on the client port: %v", err)
		Expect(ae.Status).To(Equal(http.StatusNotFound))
		Expect(ae.Code).To(Equal("NOT_FOUND"))
		peerPF := startPortForwardProbed(ns, "pod/"+clusterName+"-0", 9094, func(base string) error {
			_, err := httpPost(base+"/internal/controller/delete-topic", `{"name":"orders"}`)
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				return fmt.Errorf("plain HTTP to the peer port: want the TLS server's 400, got %v", err)
			}
			noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the refusal is the point
			if _, err := httpDo(http.MethodPost, "https"+strings.TrimPrefix(base, "http")+"/internal/controller/delete-topic",
				`{"name":"orders"}`, noCert); err == nil || errors.As(err, &ae) {
				return fmt.Errorf("TLS without a broker certificate: want a handshake error, got %v", err)
			}
			return nil
		})
		peerPF.Stop()
		Expect(getJSON(fmt.Sprintf("%s/fetch?topic=orders&partition=%d&offset=%d", pf.URL(), *reply.Partition, *reply.Offset), &f)).To(Succeed())
		Expect(f.Records).NotTo(BeEmpty(), "the refused calls deleted the topic")
	}, SpecTimeout(2*time.Minute))

	It("5. consumes with kairoctl consume --group: the ConsumerGroup shows its member, assignment and lag, and lag falls to 0", func(ctx SpecContext) {
		const records = 60
		for i := range records {
			v := fmt.Sprintf("s5-%03d", i)
			var reply produceReply
			Eventually(func() error {
				b, err := httpPost(pf.URL()+"/produce", fmt.Sprintf(`{"topic":"orders","key":%q,"value":%q,"acks":"all"}`, v, v))
				if err != nil {
					return err
				}
				return json.Unmarshal(b, &reply)
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			acked = append(acked, ackedRecord{Value: v, Partition: *reply.Partition, Offset: *reply.Offset})
		}
		total := int64(len(acked))

		mustKubectl(ctx, "-n", ns, "apply", "-f", "config/samples/kairolog_v1alpha1_consumergroup.yaml")
		// Before anyone consumes, every record is lag.
		Eventually(func(g Gomega) {
			cg := getGroup(ctx, g)
			g.Expect(conditionOf(cg.Status.Conditions, "Ready").Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cg.Status.Offsets).To(HaveLen(partitions))
			g.Expect(cg.Status.TotalLag).To(Equal(total))
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
		say("consumer group %s: lag %d before the consumer starts", groupName, total)

		consumer := startConsumer(pf.URL(), groupName, topicName)
		Eventually(func(g Gomega) {
			g.Expect(consumer.proc.Exited()).To(BeFalse(), "kairoctl consume exited:\n%s", consumer.Log())
			lines := consumer.Lines()
			for _, a := range acked {
				g.Expect(lines).To(ContainElement(a.Value))
			}
		}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
		Expect(consumer.Lines()).To(HaveLen(int(total)), "each record is consumed once")

		Eventually(func(g Gomega) {
			cg := getGroup(ctx, g)
			g.Expect(cg.Status.State).To(Equal("Stable"))
			g.Expect(cg.Status.MemberCount).To(BeEquivalentTo(1))
			g.Expect(cg.Status.Members).To(HaveLen(1))
			m := cg.Status.Members[0]
			g.Expect(m.ClientID).To(Equal("kairoctl"))
			var assigned []int32
			for _, tp := range m.Assignment {
				g.Expect(tp.Topic).To(Equal(topicName))
				assigned = append(assigned, tp.Partitions...)
			}
			g.Expect(assigned).To(ConsistOf(int32(0), int32(1), int32(2), int32(3), int32(4), int32(5)))
			g.Expect(cg.Status.Offsets).To(HaveLen(partitions))
			for _, o := range cg.Status.Offsets {
				g.Expect(o.CommittedOffset).To(Equal(o.HighWatermark), "partition %d", o.Partition)
			}
			g.Expect(cg.Status.TotalLag).To(BeZero())
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
		mustKubectl(ctx, "-n", ns, "get", "kcg", groupName)

		Expect(consumer.Interrupt()).To(Succeed(), "kairoctl consume on Ctrl-C:\n%s", consumer.Log())
	}, SpecTimeout(3*time.Minute))

	It("5b. serves kcat through kubectl port-forward of the Kafka gateway, as the chart's NOTES say: metadata, produce, consume, group commits", func(ctx SpecContext) {
		kcatThroughGateway(ctx, pf.URL())
	}, SpecTimeout(7*time.Minute))

	It("6. survives kill -9 of a broker during an acks=all producer: the pod restarts, nothing acknowledged is lost", func(ctx SpecContext) {
		prod := startProducer(pf.URL(), topicName, "s6")
		Eventually(func() int { return len(prod.Acked()) }).WithContext(ctx).WithTimeout(60*time.Second).
			Should(BeNumerically(">=", 50), func() string { return prod.Summary() })

		// The victim leads partition 0; killing it moves a leadership the
		// producer is writing to.
		var desc topicDescription
		Expect(getJSON(pf.URL()+"/topics/"+topicName, &desc)).To(Succeed())
		leader := desc.Partitions[0].Leader
		Expect(leader).To(BeNumerically(">=", 0))
		podName := fmt.Sprintf("%s-%d", clusterName, leader)
		pod := &corev1.Pod{}
		Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, pod)).To(Succeed())
		restartsBefore := pod.Status.ContainerStatuses[0].RestartCount
		pid, how := brokerPID(pod)
		conditions := recordConditions(ns, clusterName)
		say("killing broker %d (pod %s): pid %d, found %s", leader, podName, pid, how)
		Expect(syscall.Kill(pid, syscall.SIGKILL)).To(Succeed())
		killedAt := time.Now()

		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: podName}, p)).To(Succeed())
			g.Expect(p.UID).To(Equal(pod.UID), "the pod restarts in place; it is not replaced")
			cs := p.Status.ContainerStatuses[0]
			g.Expect(cs.RestartCount).To(Equal(restartsBefore + 1))
			g.Expect(cs.LastTerminationState.Terminated).NotTo(BeNil())
			g.Expect(cs.LastTerminationState.Terminated.ExitCode).To(BeEquivalentTo(137), "killed by SIGKILL")
			g.Expect(podReady(p)).To(BeTrue())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		podBack := since(killedAt)
		waitClusterReady(ctx, 3, 2*time.Minute)
		clusterBack := since(killedAt)
		say("KairoCluster conditions since the kill:\n%s", conditions.Timeline())
		Expect(conditions.Saw("Ready", metav1.ConditionFalse, "", killedAt)).To(BeTrue(),
			"the KairoCluster never reported the killed broker (Ready stayed True):\n%s", conditions.Timeline())
		waitTopicHealthy(ctx, topicName, partitions, 3, 2*time.Minute)
		recovered := time.Now()
		Eventually(func() int { return prod.AckedSince(recovered) }).WithContext(ctx).WithTimeout(60*time.Second).
			Should(BeNumerically(">=", 20), func() string { return prod.Summary() })
		prod.Stop()
		say("producer: %s; pod ready %s after the kill, cluster Ready %s after; %d acknowledged after the kill",
			prod.Summary(), podBack, clusterBack, prod.AckedSince(killedAt))

		acked = append(acked, prod.Acked()...)
		expectAllAcked(ctx, pf.URL(), topicName, acked)
	}, SpecTimeout(4*time.Minute))

	It("7. restarts brokers one at a time after a config change, never two down, nothing acknowledged lost", func(ctx SpecContext) {
		monitor := watchReadiness(ns, clusterName, 3)
		prod := startProducer(pf.URL(), topicName, "s7")
		Eventually(func() int { return len(prod.Acked()) }).WithContext(ctx).WithTimeout(60*time.Second).
			Should(BeNumerically(">=", 30), func() string { return prod.Summary() })

		kc := getCluster(ctx)
		conditions := recordConditions(ns, clusterName)
		changedAt := time.Now()
		mustKubectl(ctx, "-n", ns, "patch", "kc", clusterName, "--type", "merge",
			"-p", `{"spec":{"config":{"log.retention.check.interval.ms":"60000"}}}`)

		Eventually(func(g Gomega) {
			g.Expect(monitor.Replaced()).To(HaveLen(3), "every broker pod is replaced")
			c := getClusterG(ctx, g)
			g.Expect(c.Status.ObservedGeneration).To(BeNumerically(">", kc.Generation))
			g.Expect(conditionOf(c.Status.Conditions, "Progressing").Reason).To(Equal("UpToDate"))
		}).WithContext(ctx).WithTimeout(4*time.Minute).WithPolling(2*time.Second).Should(Succeed(),
			func() string { return "readiness timeline:\n" + monitor.Transitions() })
		waitClusterReady(ctx, 3, 2*time.Minute)
		restartTook := since(changedAt)
		Expect(conditions.Saw("Progressing", metav1.ConditionTrue, "RollingRestart", changedAt)).To(BeTrue(),
			"Progressing never said RollingRestart:\n%s", conditions.Timeline())

		cm := &corev1.ConfigMap{}
		Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-config"}, cm)).To(Succeed())
		Expect(cm.Data["broker.properties"]).To(ContainSubstring("log.retention.check.interval.ms=60000"))
		sts := &appsv1.StatefulSet{}
		Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, sts)).To(Succeed())
		hash := sts.Spec.Template.Annotations["kairolog.io/config-hash"]
		Expect(hash).NotTo(BeEmpty())
		for _, p := range brokerPods(ctx) {
			Expect(p.Annotations["kairolog.io/config-hash"]).To(Equal(hash), "pod %s runs the new template", p.Name)
		}
		Eventually(func() int { return countEvents(ctx, "KairoCluster", clusterName, "RestartingBroker", changedAt) }).
			WithContext(ctx).WithTimeout(eventDelivery).Should(BeNumerically(">=", 3))

		maxDown, at, who := monitor.MaxDown()
		timeline := monitor.Transitions()
		say("rolling restart took %s; readiness timeline:\n%s", restartTook, timeline)
		Expect(maxDown).To(BeNumerically("<=", 1),
			"%d brokers were down at once at %s: %v\n%s", maxDown, at.Format(time.RFC3339Nano), who, timeline)
		Expect(maxDown).To(Equal(1), "the monitor saw no broker go down:\n%s", timeline)

		Eventually(func() int { return prod.AckedSince(time.Now().Add(-5 * time.Second)) }).WithContext(ctx).
			WithTimeout(30*time.Second).Should(BeNumerically(">", 0), func() string { return prod.Summary() })
		prod.Stop()
		say("producer: %s; %d acknowledged during and after the restart", prod.Summary(), prod.AckedSince(changedAt))
		acked = append(acked, prod.Acked()...)
		expectAllAcked(ctx, pf.URL(), topicName, acked)
	}, SpecTimeout(6*time.Minute))

	It("8. scales 3 → 4 (the new broker joins) and back to 3 (drained, then removed); refuses a scale to 1", func(ctx SpecContext) {
		mustKubectl(ctx, "-n", ns, "scale", "kc", clusterName, "--replicas=4")
		kc := waitClusterReady(ctx, 4, 3*time.Minute)
		say("scaled up: brokers %s", brokersLine(kc))
		var brokers struct {
			Brokers []struct {
				ID    int32  `json:"id"`
				State string `json:"state"`
				Voter bool   `json:"voter"`
			} `json:"brokers"`
		}
		Expect(getJSON(pf.URL()+"/brokers", &brokers)).To(Succeed())
		joined := false
		for _, b := range brokers.Brokers {
			if b.ID == 3 {
				Expect(b.State).To(Equal("alive"))
				Expect(b.Voter).To(BeFalse(), "broker 3 joins the quorum as a non-voter")
				joined = true
			}
		}
		Expect(joined).To(BeTrue(), "broker 3 is in GET /brokers")

		// A topic created now puts replicas on broker 3 too; the scale
		// down must move them, and lose none of its records.
		Expect(kubectlApply(ctx, ns, auditManifest)).To(Succeed())
		mustKubectl(ctx, "-n", ns, "wait", "kt/"+auditTopic, "--for=condition=Ready", "--timeout=120s")
		audit := waitTopicHealthy(ctx, auditTopic, 4, 3, time.Minute)
		Expect(replicasOn(audit, 3)).NotTo(BeZero(), "broker 3 holds replicas of %s", auditTopic)
		say("%s placed with broker 3 in %d of its 4 partitions", auditTopic, replicasOn(audit, 3))
		prod := startProducer(pf.URL(), auditTopic, "s8")
		Eventually(func() int { return len(prod.Acked()) }).WithContext(ctx).WithTimeout(60*time.Second).
			Should(BeNumerically(">=", 40), func() string { return prod.Summary() })

		// Watch broker 3 and its pod while it is drained and removed.
		scaledAt := time.Now()
		mustKubectl(ctx, "-n", ns, "scale", "kc", clusterName, "--replicas=3")
		// Each poll asks the brokers first, then the API server, so "the
		// broker is gone while its pod still exists" is seen for certain.
		// "Drained while its pod still exists" lasts from the end of the
		// drain until the pod is deleted and its broker stopped: about
		// 100 ms on the local cluster (the operator sees the drain, scales
		// the StatefulSet, the node agent stops the broker), so the polls
		// come every 20 ms.
		var drainedAt, podGoneAt, removedAt time.Time
		var seenStates []string
		removedWithPod := false
		Eventually(func(g Gomega) {
			var b struct {
				State      string `json:"state"`
				Partitions int32  `json:"partitions"`
			}
			err := getJSON(pf.URL()+"/brokers/3", &b)
			var apiErr *apiError
			known, removed := err == nil, errors.As(err, &apiErr) && apiErr.Code == "UNKNOWN_BROKER"
			podErr := s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-3"}, &corev1.Pod{})
			podExists := podErr == nil
			now := time.Now()
			if known && (len(seenStates) == 0 || seenStates[len(seenStates)-1] != b.State) {
				seenStates = append(seenStates, b.State)
			}
			if known && podExists && b.State == "drained" && b.Partitions == 0 && drainedAt.IsZero() {
				drainedAt = now
			}
			if removed && podExists {
				removedWithPod = true
			}
			if removed && removedAt.IsZero() {
				removedAt = now
			}
			if apierrors.IsNotFound(podErr) && podGoneAt.IsZero() {
				podGoneAt = now
			}
			g.Expect(podGoneAt.IsZero()).To(BeFalse(), "pod %s-3 still exists", clusterName)
			g.Expect(removedAt.IsZero()).To(BeFalse(), "broker 3 is still in the metadata")
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(20 * time.Millisecond).Should(Succeed())
		say("scale down: broker 3 states %v; drained %s, pod gone %s, removed %s after the scale",
			seenStates, drainedAt.Sub(scaledAt).Round(100*time.Millisecond), podGoneAt.Sub(scaledAt).Round(100*time.Millisecond),
			removedAt.Sub(scaledAt).Round(100*time.Millisecond))
		Expect(drainedAt.IsZero()).To(BeFalse(), "broker 3 was never seen drained while its pod ran (states %v)", seenStates)
		Expect(removedWithPod).To(BeFalse(), "broker 3 was removed from the metadata while its pod still existed")
		Eventually(func() error {
			return eventOrder(ctx, "KairoCluster", clusterName, scaledAt, "Draining", "ScalingDown", "BrokerRemoved")
		}).WithContext(ctx).WithTimeout(eventDelivery).Should(Succeed())

		kc = waitClusterReady(ctx, 3, 2*time.Minute)
		say("scaled down: brokers %s", brokersLine(kc))
		// The brokers answer at once; the Topic's status follows at its
		// next observation.
		Eventually(func(g Gomega) {
			var d topicDescription
			g.Expect(getJSON(pf.URL()+"/topics/"+auditTopic, &d)).To(Succeed())
			for _, p := range d.Partitions {
				g.Expect(p.Replicas).To(HaveLen(3), "partition %d", p.Partition)
				g.Expect(p.Replicas).NotTo(ContainElement(int32(3)), "partition %d", p.Partition)
				g.Expect(p.ISR).To(ConsistOf(toAny(p.Replicas)...), "partition %d", p.Partition)
			}
			t := &kairov1alpha1.Topic{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: auditTopic}, t)).To(Succeed())
			g.Expect(replicasOn(t, 3)).To(BeZero(), "partitions of %s listing broker 3 in the Topic's status", auditTopic)
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		waitTopicHealthy(ctx, auditTopic, 4, 3, time.Minute)
		prod.Stop()
		say("producer on %s: %s", auditTopic, prod.Summary())
		expectAllAcked(ctx, pf.URL(), auditTopic, prod.Acked())

		// Below the quorum's voters and below the topics' replicas: refused.
		refusedAt := time.Now()
		mustKubectl(ctx, "-n", ns, "scale", "kc", clusterName, "--replicas=1")
		Eventually(func(g Gomega) {
			c := getClusterG(ctx, g)
			d := conditionOf(c.Status.Conditions, "Degraded")
			g.Expect(d.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(d.Reason).To(Equal("ScaleDownRefused"))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func() int { return countEvents(ctx, "KairoCluster", clusterName, "ScaleDownRefused", refusedAt) }).
			WithContext(ctx).WithTimeout(eventDelivery).Should(BeNumerically(">=", 1))
		Consistently(func(g Gomega) {
			sts := &appsv1.StatefulSet{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, sts)).To(Succeed())
			g.Expect(*sts.Spec.Replicas).To(BeEquivalentTo(3))
			pods := brokerPods(ctx)
			g.Expect(pods).To(HaveLen(3))
			for _, p := range pods {
				g.Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
			}
			var b struct {
				Brokers []struct {
					ID    int32  `json:"id"`
					State string `json:"state"`
				} `json:"brokers"`
			}
			g.Expect(getJSON(pf.URL()+"/brokers", &b)).To(Succeed())
			for _, br := range b.Brokers {
				g.Expect(br.State).To(Equal("alive"), "broker %d", br.ID)
			}
		}).WithContext(ctx).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		say("scale to 1 refused: %s", conditionOf(getCluster(ctx).Status.Conditions, "Degraded").Message)

		mustKubectl(ctx, "-n", ns, "scale", "kc", clusterName, "--replicas=3")
		Eventually(func(g Gomega) {
			g.Expect(conditionOf(getClusterG(ctx, g).Status.Conditions, "Degraded").Status).To(Equal(metav1.ConditionFalse))
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		waitClusterReady(ctx, 3, time.Minute)
	}, SpecTimeout(6*time.Minute))

	It("8b. a KairoCluster whose image tag does not exist: its broker waits in ImagePullBackOff, and the cluster's Ready condition says so", func(ctx SpecContext) {
		const badNS, bad = "bad-image", "broken"
		mustKubectl(ctx, "create", "namespace", badNS)
		Expect(kubectlApply(ctx, badNS, `apiVersion: kairolog.io/v1alpha1
kind: KairoCluster
metadata:
  name: `+bad+`
spec:
  replicas: 1
  image: kairolog/broker:no-such-tag
  storage:
    size: 1Gi
`)).To(Succeed())
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: badNS, Name: bad + "-0"}, pod)).To(Succeed())
			g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
			w := pod.Status.ContainerStatuses[0].State.Waiting
			g.Expect(w).NotTo(BeNil())
			g.Expect(w.Reason).To(Equal("ImagePullBackOff"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			events := mustKubectl(ctx, "-n", badNS, "get", "events", "--field-selector", "involvedObject.name="+bad+"-0", "-o", "jsonpath={..message}")
			g.Expect(events).To(ContainSubstring(`Failed to pull image "kairolog/broker:no-such-tag": failed to resolve reference "docker.io/kairolog/broker:no-such-tag"`))
			g.Expect(events).To(ContainSubstring("Error: ImagePullBackOff"))
		}).WithContext(ctx).WithTimeout(eventDelivery).Should(Succeed())
		Eventually(func(g Gomega) {
			kc := &kairov1alpha1.KairoCluster{}
			g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: badNS, Name: bad}, kc)).To(Succeed())
			ready := meta.FindStatusCondition(kc.Status.Conditions, kairov1alpha1.ConditionReady)
			g.Expect(ready).NotTo(BeNil())
			g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(ready.Message).To(ContainSubstring(bad + "-0: ImagePullBackOff"))
			say("bad image: Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		mustKubectl(ctx, "delete", "namespace", badNS, "--wait=false")
	}, SpecTimeout(5*time.Minute))

	It("9. deletes the Topic from the brokers, and garbage-collects the KairoCluster's children", func(ctx SpecContext) {
		topicDirs := func(topic string) []string {
			dirs, _ := filepath.Glob(filepath.Join(s.cluster.StateDir(), "volumes", "*", "data", topic+"-*"))
			return dirs
		}
		Expect(topicDirs(topicName)).NotTo(BeEmpty(), "the brokers' volumes hold %s's partitions", topicName)

		mustKubectl(ctx, "-n", ns, "delete", "kt", topicName, "--timeout=120s")
		Eventually(func(g Gomega) {
			_, err := httpGet(pf.URL() + "/topics/" + topicName)
			var apiErr *apiError
			g.Expect(errors.As(err, &apiErr)).To(BeTrue(), "GET /topics/%s: %v", topicName, err)
			g.Expect(apiErr.Code).To(Equal("UNKNOWN_TOPIC"))
			var list struct {
				Topics []string `json:"topics"`
			}
			g.Expect(getJSON(pf.URL()+"/topics", &list)).To(Succeed())
			g.Expect(list.Topics).NotTo(ContainElement(topicName))
			g.Expect(topicDirs(topicName)).To(BeEmpty(), "partition directories left on the brokers' volumes")
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func() int { return countEvents(ctx, "Topic", topicName, "TopicDeleted", time.Time{}) }).
			WithContext(ctx).WithTimeout(eventDelivery).Should(BeNumerically(">=", 1))
		mustKubectl(ctx, "-n", ns, "delete", "kt", auditTopic, "--timeout=120s")

		pf.Stop()
		mustKubectl(ctx, "-n", ns, "delete", "kc", clusterName, "--timeout=120s")
		Eventually(func(g Gomega) {
			for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}} {
				err := s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, obj)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s: %v", obj, clusterName, err)
			}
			err := s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-headless"}, &corev1.Service{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "headless Service: %v", err)
			err = s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-config"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "ConfigMap: %v", err)
			g.Expect(brokerPods(ctx)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

		// Claims are not children: with the default retention (Retain) the
		// data outlives the cluster, as docs/operator.md says.
		pvcs := &corev1.PersistentVolumeClaimList{}
		Expect(s.k8s.List(ctx, pvcs, client.InNamespace(ns))).To(Succeed())
		var names []string
		for _, p := range pvcs.Items {
			names = append(names, p.Name)
		}
		Expect(names).To(ContainElements("data-kairo-0", "data-kairo-1", "data-kairo-2"))
	}, SpecTimeout(3*time.Minute))

	It("9b. secures a KairoCluster: curl over HTTPS with users and ACLs, kcat over SASL_SSL, a CA renewal under an acks=all producer", func(ctx SpecContext) {
		securedCluster(ctx)
	}, SpecTimeout(12*time.Minute))

	It("10. uninstalls the chart; deleting the namespaces is not blocked by any finalizer", func(ctx SpecContext) {
		_, err := helm(ctx, "uninstall", releaseName, "--namespace", releaseNS, "--wait", "--timeout", "2m")
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			err := s.k8s.Get(ctx, client.ObjectKey{Namespace: releaseNS, Name: releaseName}, &appsv1.Deployment{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "operator Deployment: %v", err)
			pods := &corev1.PodList{}
			g.Expect(s.k8s.List(ctx, pods, client.InNamespace(releaseNS))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		// crds.keep (the default) leaves the CRDs and every resource.
		c := &apiextensionsv1.CustomResourceDefinition{}
		Expect(s.k8s.Get(ctx, client.ObjectKey{Name: "kairoclusters.kairolog.io"}, c)).To(Succeed())
		Expect(c.Annotations).To(HaveKeyWithValue("helm.sh/resource-policy", "keep"))

		// The consumer group (deletionPolicy Retain) is still there, with
		// no finalizer: with no operator running, nothing may hold the
		// namespace.
		cgs := &kairov1alpha1.ConsumerGroupList{}
		Expect(s.k8s.List(ctx, cgs, client.InNamespace(ns))).To(Succeed())
		Expect(cgs.Items).To(HaveLen(1))
		Expect(cgs.Items[0].Finalizers).To(BeEmpty())
		kts := &kairov1alpha1.TopicList{}
		Expect(s.k8s.List(ctx, kts, client.InNamespace(ns))).To(Succeed())
		Expect(kts.Items).To(BeEmpty())
		mustKubectl(ctx, "delete", "namespace", ns, releaseNS, "--wait=false")
		Eventually(func(g Gomega) {
			for _, name := range []string{ns, releaseNS} {
				n := &corev1.Namespace{}
				err := s.k8s.Get(ctx, client.ObjectKey{Name: name}, n)
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s: %s", name, namespaceState(n))
			}
		}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	}, SpecTimeout(4*time.Minute))
})

// operatorPod is the operator's one pod.
func operatorPod(ctx context.Context) *corev1.Pod {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(s.k8s.List(ctx, pods, client.InNamespace(releaseNS),
		client.MatchingLabels{"app.kubernetes.io/instance": releaseName})).To(Succeed())
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	Expect(live).To(HaveLen(1))
	return &live[0]
}

func crdEstablished(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established {
			return cond.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

func getCluster(ctx context.Context) *kairov1alpha1.KairoCluster {
	GinkgoHelper()
	kc := &kairov1alpha1.KairoCluster{}
	Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, kc)).To(Succeed())
	return kc
}

func getClusterG(ctx context.Context, g Gomega) *kairov1alpha1.KairoCluster {
	kc := &kairov1alpha1.KairoCluster{}
	g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, kc)).To(Succeed())
	return kc
}

func getGroup(ctx context.Context, g Gomega) *kairov1alpha1.ConsumerGroup {
	cg := &kairov1alpha1.ConsumerGroup{}
	g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: groupName}, cg)).To(Succeed())
	return cg
}

// waitClusterReady waits until the KairoCluster has observed its spec and
// reports every one of replicas brokers ready and alive, a controller, and
// Ready=True.
func waitClusterReady(ctx context.Context, replicas int, timeout time.Duration) *kairov1alpha1.KairoCluster {
	GinkgoHelper()
	return waitClusterReadyIn(ctx, ns, clusterName, replicas, timeout)
}

// waitClusterReadyIn is waitClusterReady for any KairoCluster.
func waitClusterReadyIn(ctx context.Context, namespace, name string, replicas int, timeout time.Duration) *kairov1alpha1.KairoCluster {
	GinkgoHelper()
	var kc *kairov1alpha1.KairoCluster
	Eventually(func(g Gomega) {
		kc = &kairov1alpha1.KairoCluster{}
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, kc)).To(Succeed())
		st := kc.Status
		g.Expect(st.ObservedGeneration).To(Equal(kc.Generation), "status is of the current spec")
		ready := conditionOf(st.Conditions, "Ready")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s %s", ready.Reason, ready.Message)
		g.Expect(st.Replicas).To(BeEquivalentTo(replicas))
		g.Expect(st.ReadyReplicas).To(BeEquivalentTo(replicas))
		g.Expect(st.ControllerID).NotTo(BeNil())
		g.Expect(st.Brokers).To(HaveLen(replicas), "brokers %s", brokersLine(kc))
		for i, b := range st.Brokers {
			g.Expect(b.ID).To(BeEquivalentTo(i))
			g.Expect(b.Pod).To(Equal(fmt.Sprintf("%s-%d", name, i)))
			g.Expect(b.Ready).To(BeTrue(), "broker %d ready", b.ID)
			g.Expect(b.State).To(Equal("alive"), "broker %d", b.ID)
		}
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return kc
}

func brokersLine(kc *kairov1alpha1.KairoCluster) string {
	var parts []string
	for _, b := range kc.Status.Brokers {
		parts = append(parts, fmt.Sprintf("%d:%s/ready=%v/partitions=%d/leaders=%d", b.ID, b.State, b.Ready, b.Partitions, b.Leaders))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// waitTopicHealthy waits until a Topic is Ready for its current spec with
// every partition led by one of its replicas and every replica in sync.
func waitTopicHealthy(ctx context.Context, name string, parts, replicas int, timeout time.Duration) *kairov1alpha1.Topic {
	GinkgoHelper()
	t := &kairov1alpha1.Topic{}
	Eventually(func(g Gomega) {
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, t)).To(Succeed())
		g.Expect(t.Status.ObservedGeneration).To(Equal(t.Generation))
		ready := conditionOf(t.Status.Conditions, "Ready")
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %s %s", ready.Reason, ready.Message)
		g.Expect(t.Status.Partitions).To(BeEquivalentTo(parts))
		g.Expect(t.Status.Replicas).To(BeEquivalentTo(replicas))
		g.Expect(t.Status.PartitionStatuses).To(HaveLen(parts))
		g.Expect(t.Status.UnderReplicatedPartitions).To(BeZero())
		g.Expect(t.Status.OfflinePartitions).To(BeZero())
		for _, p := range t.Status.PartitionStatuses {
			g.Expect(p.Replicas).To(HaveLen(replicas), "partition %d", p.Partition)
			g.Expect(p.Replicas).To(ContainElement(p.Leader), "partition %d has a leader among its replicas", p.Partition)
			g.Expect(p.ISR).To(ConsistOf(toAny(p.Replicas)...), "partition %d: every replica in sync", p.Partition)
		}
	}).WithContext(ctx).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	return t
}

func toAny(ids []int32) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

func replicasOn(t *kairov1alpha1.Topic, broker int32) int {
	n := 0
	for _, p := range t.Status.PartitionStatuses {
		if slices.Contains(p.Replicas, broker) || slices.Contains(p.ISR, broker) {
			n++
		}
	}
	return n
}

// brokerPods lists the cluster's broker pods by name.
func brokerPods(ctx context.Context) []corev1.Pod {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(s.k8s.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{
		"app.kubernetes.io/instance": clusterName, "app.kubernetes.io/component": "broker"})).To(Succeed())
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items
}

// expectAllAcked reads the topic back through the port-forward and checks
// every acknowledged record. Right after a leader change a partition's new
// leader may still learn the high watermark, so the read is retried for a
// while before a missing record counts as lost.
func expectAllAcked(ctx context.Context, base, topic string, acked []ackedRecord) {
	GinkgoHelper()
	parts := int32(0)
	for _, a := range acked {
		parts = max(parts, a.Partition+1)
	}
	var desc topicDescription
	Expect(getJSON(base+"/topics/"+topic, &desc)).To(Succeed())
	parts = max(parts, int32(len(desc.Partitions)))
	var total int
	Eventually(func() error {
		var err error
		total, err = checkAcked(base, topic, parts, acked)
		return err
	}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
	say("read back %s: all %d acknowledged records at their offsets, exactly once (%d records in the topic)", topic, len(acked), total)
}

// brokerPID finds the broker's OS process for a pod. The node reports each
// container's process as status.containerStatuses[].containerID
// "process://<pid>"; the broker is that process or, if the node starts it
// through a helper, its descendant whose /proc/<pid>/exe is the broker
// image's entrypoint, /usr/local/bin/broker inside the container's root.
func brokerPID(pod *corev1.Pod) (int, string) {
	GinkgoHelper()
	id := pod.Status.ContainerStatuses[0].ContainerID
	root, err := strconv.Atoi(strings.TrimPrefix(id, "process://"))
	Expect(err).NotTo(HaveOccurred(), "containerID %q", id)
	const want = "/usr/local/bin/broker"
	isBroker := func(pid int) bool {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		return err == nil && strings.TrimSuffix(exe, " (deleted)") == want
	}
	if isBroker(root) {
		return root, fmt.Sprintf("from containerID %s, /proc/%d/exe = %s", id, root, want)
	}
	for _, pid := range descendants(root) {
		if isBroker(pid) {
			return pid, fmt.Sprintf("as the descendant of containerID %s whose /proc/<pid>/exe is %s", id, want)
		}
	}
	Fail(fmt.Sprintf("no process running %s under containerID %s", want, id))
	return 0, ""
}

// descendants lists every process below pid, from /proc/*/stat.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// clusterEvents lists the events about one object since a time, oldest
// first.
func clusterEvents(ctx context.Context, kind, name string, since time.Time) []corev1.Event {
	GinkgoHelper()
	list := &corev1.EventList{}
	Expect(s.k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Kind != kind || e.InvolvedObject.Name != name || eventTime(e).Before(since) {
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return eventTime(out[i]).Before(eventTime(out[j])) })
	return out
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	default:
		return e.CreationTimestamp.Time
	}
}

func countEvents(ctx context.Context, kind, name, reason string, since time.Time) int {
	GinkgoHelper()
	n := 0
	for _, e := range clusterEvents(ctx, kind, name, since.Add(-time.Second)) {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// eventDelivery bounds how long an event takes to reach the API server:
// the controllers record events asynchronously, so the change an event
// reports can be visible on the brokers a moment before the event is.
const eventDelivery = 30 * time.Second

// eventOrder checks that the first events with these reasons came in this
// order.
func eventOrder(ctx context.Context, kind, name string, since time.Time, reasons ...string) error {
	first := map[string]time.Time{}
	for _, e := range clusterEvents(ctx, kind, name, since.Add(-time.Second)) {
		if _, ok := first[e.Reason]; !ok {
			first[e.Reason] = eventTime(e)
		}
	}
	for i, r := range reasons {
		if _, ok := first[r]; !ok {
			return fmt.Errorf("no %s event on %s %s (events: %v)", r, kind, name, first)
		}
		if i > 0 && first[r].Before(first[reasons[i-1]]) {
			return fmt.Errorf("%s event (%s) came before %s (%s)", r, first[r].Format(time.RFC3339Nano),
				reasons[i-1], first[reasons[i-1]].Format(time.RFC3339Nano))
		}
	}
	return nil
}

func namespaceState(n *corev1.Namespace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s", n.Status.Phase)
	for _, c := range n.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			fmt.Fprintf(&b, "; %s: %s", c.Type, c.Message)
		}
	}
	return b.String()
}
