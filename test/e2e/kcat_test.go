package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// Kafka clients through the Kafka gateway and `kubectl port-forward`, as
// the chart's NOTES tell a user: the real kcat (librdkafka) lists the
// metadata, produces, consumes, and consumes in a group, against the three
// brokers of the suite's cluster.

const (
	kcatTopic = "clicks"
	kcatGroup = "kcat-readers"
	// kcatPartitions: records spread over several partitions, each led by
	// a broker the gateway passes requests on to.
	kcatPartitions = 3
	// notesGatewayPort is the gateway port the chart's NOTES name: the
	// default kafkaGatewayPort.
	notesGatewayPort = 9095
)

const kcatTopicManifest = `apiVersion: kairolog.io/v1alpha1
kind: Topic
metadata:
  name: clicks
spec:
  clusterRef:
    name: kairo
  partitions: 3
  replicas: 3
  config:
    min.insync.replicas: "2"
`

const kcatGroupManifest = `apiVersion: kairolog.io/v1alpha1
kind: ConsumerGroup
metadata:
  name: kcat-readers
spec:
  clusterRef:
    name: kairo
  topics:
  - clicks
`

// notesCommands are the Kafka commands of the chart's NOTES.
type notesCommands struct {
	portForward, list, produce, groupConsume []string
}

// readNotesCommands takes the port-forward and kcat commands from the
// installed release's NOTES (`helm get notes`).
func readNotesCommands(ctx context.Context) notesCommands {
	GinkgoHelper()
	notes, err := helm(ctx, "get", "notes", releaseName, "--namespace", releaseNS)
	Expect(err).NotTo(HaveOccurred())
	var nc notesCommands
	for _, line := range strings.Split(notes, "\n") {
		line = strings.TrimSpace(line)
		if _, after, ok := strings.Cut(line, "| "); ok && strings.HasPrefix(line, "echo ") {
			line = after // the records come from the suite, not from echo
		}
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "kubectl port-forward svc/") && strings.Contains(line, strconv.Itoa(notesGatewayPort)):
			nc.portForward = f
		case strings.HasPrefix(line, "kcat ") && slices.Contains(f, "-L"):
			nc.list = f
		case strings.HasPrefix(line, "kcat ") && slices.Contains(f, "-P"):
			nc.produce = f
		case strings.HasPrefix(line, "kcat ") && slices.Contains(f, "-G"):
			nc.groupConsume = f
		}
	}
	Expect(nc.portForward).To(Equal([]string{"kubectl", "port-forward", "svc/" + clusterName,
		fmt.Sprintf("%d:%d", notesGatewayPort, notesGatewayPort)}), "NOTES:\n%s", notes)
	bootstrap := fmt.Sprintf("localhost:%d", notesGatewayPort)
	Expect(nc.list).To(Equal([]string{"kcat", "-b", bootstrap, "-L"}), "NOTES:\n%s", notes)
	Expect(nc.produce).To(Equal([]string{"kcat", "-b", bootstrap, "-t", topicName, "-P"}), "NOTES:\n%s", notes)
	Expect(nc.groupConsume).To(Equal([]string{"kcat", "-b", bootstrap, "-G", groupName,
		"-X", "auto.offset.reset=earliest", "-e", topicName}), "NOTES:\n%s", notes)
	return nc
}

// localize turns a NOTES command into the one the suite runs: the local
// port kubectl bound instead of 9095, the suite's topic and group instead
// of orders and analytics-workers, and extra flags (output format, keys)
// right after the bootstrap address.
func localize(cmd []string, port int, extra ...string) []string {
	var out []string
	for _, f := range cmd {
		switch f {
		case fmt.Sprintf("localhost:%d", notesGatewayPort):
			f = fmt.Sprintf("localhost:%d", port)
		case topicName:
			f = kcatTopic
		case groupName:
			f = kcatGroup
		}
		out = append(out, f)
		if strings.HasPrefix(f, "localhost:") {
			out = append(out, extra...)
		}
	}
	return out[1:] // without "kcat"
}

// kcat runs the kcat of PATH (the Debian package; .ci/run installs it).
func kcat(ctx context.Context, stdin string, args ...string) string {
	GinkgoHelper()
	path, err := exec.LookPath("kcat")
	Expect(err).NotTo(HaveOccurred(), "kcat is not installed (apt-get install -y kcat; .ci/run does)")
	out, err := run(ctx, stdin, path, args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// kcatRecord is a record as kcat prints it with kcatFormat.
type kcatRecord struct {
	Partition  int32
	Offset     int64
	Key, Value string
}

const kcatFormat = "%p|%o|%k|%s\n"

func parseKcat(out string) []kcatRecord {
	GinkgoHelper()
	var recs []kcatRecord
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		Expect(f).To(HaveLen(4), "kcat line %q", line)
		p, err := strconv.ParseInt(f[0], 10, 32)
		Expect(err).NotTo(HaveOccurred(), "kcat line %q", line)
		o, err := strconv.ParseInt(f[1], 10, 64)
		Expect(err).NotTo(HaveOccurred(), "kcat line %q", line)
		recs = append(recs, kcatRecord{Partition: int32(p), Offset: o, Key: f[2], Value: f[3]})
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	return recs
}

// kcatMetadata is what `kcat -L -J` prints.
type kcatMetadata struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Partitions []struct {
			Partition int32 `json:"partition"`
			Leader    int32 `json:"leader"`
		} `json:"partitions"`
	} `json:"topics"`
}

// kcatThroughGateway is scenario 5b; base is the HTTP port-forward.
func kcatThroughGateway(ctx context.Context, base string) {
	GinkgoHelper()
	Expect(kubectlApply(ctx, ns, kcatTopicManifest)).To(Succeed())
	mustKubectl(ctx, "-n", ns, "wait", "kt/"+kcatTopic, "--for=condition=Ready", "--timeout=120s")
	waitTopicHealthy(ctx, kcatTopic, kcatPartitions, 3, time.Minute)

	// Inside the cluster Kafka clients bootstrap at the client Service's
	// Kafka port; the status says where, and the Service has both ports.
	kc := getCluster(ctx)
	Expect(kc.Status.KafkaBootstrap).To(Equal(fmt.Sprintf("%s.%s.svc:9092", clusterName, ns)))
	svc := &corev1.Service{}
	Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, svc)).To(Succeed())
	Expect(svc.Spec.Ports).To(ContainElements(
		SatisfyAll(HaveField("Name", "kafka"), HaveField("Port", BeEquivalentTo(9092))),
		SatisfyAll(HaveField("Name", "kafka-gateway"), HaveField("Port", BeEquivalentTo(notesGatewayPort)))))

	notes := readNotesCommands(ctx)

	// A gateway names localhost:<kafkaGatewayPort> as the one broker, so
	// the forward's local port must be the cluster's kafkaGatewayPort.
	// kubectl picks a free local port, and the cluster is told to
	// advertise it: a rolling restart of the brokers.
	gf := startGatewayForward(ns, notes.portForward[2], notesGatewayPort)
	port := gf.Local()
	monitor := watchReadiness(ns, clusterName, 3)
	defer monitor.Stop()
	mustKubectl(ctx, "-n", ns, "patch", "kc", clusterName, "--type", "merge",
		"-p", fmt.Sprintf(`{"spec":{"service":{"kafkaGatewayPort":%d}}}`, port))
	gf.SetRemote(port)
	advertised := fmt.Sprintf("--kafka-gateway-advertised-address=localhost:%d", port)
	Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Spec.Containers[0].Args).To(ContainElement(advertised))
		pods := brokerPods(ctx)
		g.Expect(pods).To(HaveLen(3))
		for _, p := range pods {
			g.Expect(p.Spec.Containers[0].Args).To(ContainElement(advertised), "pod %s runs the new template", p.Name)
		}
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, svc)).To(Succeed())
		g.Expect(svc.Spec.Ports).To(ContainElement(SatisfyAll(HaveField("Name", "kafka-gateway"),
			HaveField("Port", BeEquivalentTo(port)), HaveField("TargetPort.StrVal", "kafka-gateway"))))
		c := getClusterG(ctx, g)
		g.Expect(conditionOf(c.Status.Conditions, "Progressing").Reason).To(Equal("UpToDate"))
	}).WithContext(ctx).WithTimeout(4*time.Minute).WithPolling(2*time.Second).Should(Succeed(),
		func() string { return "readiness timeline:\n" + monitor.Transitions() })
	waitClusterReady(ctx, 3, 2*time.Minute)
	waitTopicHealthy(ctx, kcatTopic, kcatPartitions, 3, 2*time.Minute)
	waitTopicHealthy(ctx, topicName, partitions, 3, 2*time.Minute)
	maxDown, _, _ := monitor.MaxDown()
	Expect(maxDown).To(Equal(1), "the brokers restart one at a time:\n%s", monitor.Transitions())
	// The kubectl started before the restart may forward to a pod that is
	// gone now; the next one is the NOTES command with the new port.
	say("kafkaGatewayPort %d: brokers restarted one at a time; kubectl was started again %d time(s) on port %d meanwhile",
		port, gf.Restarts(), port)
	gf.Restart()

	// kcat -L: the gateway is the one broker, at localhost:<port>, and
	// leads every partition of the topic.
	var meta kcatMetadata
	Eventually(func(g Gomega) {
		out, err := run(ctx, "", "kcat", localize(notes.list, port, "-J", "-t", kcatTopic, "-m", "5")...)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(json.Unmarshal([]byte(out), &meta)).To(Succeed(), "kcat -L -J: %s", out)
		g.Expect(meta.Topics).To(HaveLen(1))
		g.Expect(meta.Topics[0].Partitions).To(HaveLen(kcatPartitions))
	}).WithContext(ctx).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Succeed())
	Expect(meta.Brokers).To(HaveLen(1), "the gateway names itself alone: %+v", meta.Brokers)
	Expect(meta.Brokers[0].Name).To(Equal(fmt.Sprintf("localhost:%d", port)))
	Expect(meta.Brokers[0].ID).To(BeElementOf(int32(0), int32(1), int32(2)))
	Expect(meta.Topics[0].Topic).To(Equal(kcatTopic))
	for _, p := range meta.Topics[0].Partitions {
		Expect(p.Leader).To(Equal(meta.Brokers[0].ID), "partition %d is led by the gateway", p.Partition)
	}

	// kcat -P: the NOTES' "echo hello" line as it is, then keyed records
	// (-K :), each key on one partition.
	kcat(ctx, "hello\n", localize(notes.produce, port)...)
	var lines []string
	want := map[string]bool{"hello": true}
	for i := range 36 {
		key, value := fmt.Sprintf("user-%d", i%12), fmt.Sprintf("click-%02d", i)
		lines = append(lines, key+":"+value)
		want[value] = true
	}
	kcat(ctx, strings.Join(lines, "\n")+"\n", localize(notes.produce, port, "-K", ":")...)

	// The HTTP API holds them, each once, at offsets 0.. of its partition.
	var stored map[int32]map[int64]string
	Eventually(func() (err error) {
		stored, err = readPartitions(base, kcatTopic, kcatPartitions)
		return err
	}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
	var fromHTTP []kcatRecord
	used := 0
	for p := range int32(kcatPartitions) {
		for o := range int64(len(stored[p])) {
			v, ok := stored[p][o]
			Expect(ok).To(BeTrue(), "partition %d has no record at %d below its high watermark %d", p, o, len(stored[p]))
			fromHTTP = append(fromHTTP, kcatRecord{Partition: p, Offset: o, Value: v})
		}
		if len(stored[p]) > 0 {
			used++
		}
	}
	Expect(fromHTTP).To(HaveLen(len(want)), "every record kcat produced is stored once: %+v", fromHTTP)
	for _, r := range fromHTTP {
		Expect(want).To(HaveKey(r.Value))
	}
	Expect(used).To(BeNumerically(">=", 2), "the keys spread over the partitions: %+v", fromHTTP)

	// kcat -C -e reads them back: the same records at the same offsets.
	read := parseKcat(kcat(ctx, "", localize([]string{"kcat", "-b", fmt.Sprintf("localhost:%d", notesGatewayPort)}, port,
		"-C", "-t", kcatTopic, "-o", "beginning", "-e", "-q", "-f", kcatFormat)...))
	keyPartition := map[string]int32{}
	for i, r := range read {
		Expect(i).To(BeNumerically("<", len(fromHTTP)), "kcat read more than is stored: %+v", read)
		Expect(kcatRecord{Partition: r.Partition, Offset: r.Offset, Value: r.Value}).To(Equal(fromHTTP[i]))
		if r.Key == "" {
			Expect(r.Value).To(Equal("hello"))
			continue
		}
		Expect(lines).To(ContainElement(r.Key + ":" + r.Value))
		if p, ok := keyPartition[r.Key]; ok {
			Expect(r.Partition).To(Equal(p), "key %s in two partitions", r.Key)
		}
		keyPartition[r.Key] = r.Partition
	}
	Expect(read).To(HaveLen(len(fromHTTP)))

	// kcat -G, the NOTES' group consumer: it reads every record once and
	// commits what it read when it leaves.
	consumed := parseKcat(kcat(ctx, "", localize(notes.groupConsume, port, "-q", "-f", kcatFormat)...))
	Expect(consumed).To(Equal(read), "kcat -G reads every record once")

	// The group's commits, as GET /groups/{g} and the ConsumerGroup show
	// them: every partition committed at its log end, no lag.
	var desc struct {
		Group   string `json:"group"`
		Offsets []struct {
			Topic           string `json:"topic"`
			Partition       int32  `json:"partition"`
			CommittedOffset int64  `json:"committed_offset"`
			HighWatermark   int64  `json:"high_watermark"`
			LogEndOffset    int64  `json:"log_end_offset"`
			Lag             int64  `json:"lag"`
		} `json:"offsets"`
		TotalLag int64 `json:"total_lag"`
	}
	Expect(getJSON(base+"/groups/"+kcatGroup+"?topics="+kcatTopic, &desc)).To(Succeed())
	Expect(desc.Group).To(Equal(kcatGroup))
	Expect(desc.Offsets).To(HaveLen(kcatPartitions))
	for _, o := range desc.Offsets {
		end := int64(len(stored[o.Partition]))
		Expect(o.Topic).To(Equal(kcatTopic))
		Expect(o.CommittedOffset).To(Equal(end), "partition %d: committed at the log end", o.Partition)
		Expect(o.HighWatermark).To(Equal(end), "partition %d", o.Partition)
		Expect(o.LogEndOffset).To(Equal(end), "partition %d", o.Partition)
		Expect(o.Lag).To(BeZero(), "partition %d", o.Partition)
	}
	Expect(desc.TotalLag).To(BeZero())

	Expect(kubectlApply(ctx, ns, kcatGroupManifest)).To(Succeed())
	Eventually(func(g Gomega) {
		cg := &kairov1alpha1.ConsumerGroup{}
		g.Expect(s.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: kcatGroup}, cg)).To(Succeed())
		g.Expect(conditionOf(cg.Status.Conditions, "Ready").Status).To(Equal(metav1.ConditionTrue))
		g.Expect(cg.Status.Offsets).To(HaveLen(kcatPartitions))
		for _, o := range cg.Status.Offsets {
			end := int64(len(stored[o.Partition]))
			g.Expect(o.Topic).To(Equal(kcatTopic))
			g.Expect(o.CommittedOffset).To(Equal(end), "partition %d", o.Partition)
			g.Expect(o.HighWatermark).To(Equal(end), "partition %d", o.Partition)
		}
		g.Expect(cg.Status.TotalLag).To(BeZero())
	}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
	mustKubectl(ctx, "-n", ns, "get", "kcg", kcatGroup)
	say("kcat through the gateway: %d records on %d partitions produced, read back and consumed by group %s, committed at the log end",
		len(read), used, kcatGroup)

	gf.Stop()
	mustKubectl(ctx, "-n", ns, "delete", "kcg", kcatGroup, "--timeout=60s")
	mustKubectl(ctx, "-n", ns, "delete", "kt", kcatTopic, "--timeout=120s")
}
