package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// dumpDiagnostics prints what a person would look at after a failure: the
// KairoLog resources' conditions, the pods, recent events, the tail of
// every broker's and the operator's log, and of the node's own log.
func dumpDiagnostics() {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := GinkgoWriter
	section := func(title string) { fmt.Fprintf(w, "\n===== %s =====\n", title) }

	section("KairoLog resources and their conditions")
	fmt.Fprint(w, describeResources(ctx))

	section("pods")
	out, err := kubectl(ctx, "get", "pods", "-A", "-o", "wide")
	fmt.Fprint(w, out, errText(err))

	section("recent events")
	out, err = kubectl(ctx, "get", "events", "-A", "--sort-by=.lastTimestamp")
	fmt.Fprint(w, tailLines(out, 60), errText(err))

	pods := &corev1.PodList{}
	if err := s.k8s.List(ctx, pods); err != nil {
		fmt.Fprintf(w, "listing pods: %v\n", err)
	}
	for _, p := range pods.Items {
		if p.Namespace == "kube-system" || p.Namespace == "default" {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			section(fmt.Sprintf("logs of %s/%s (%s, restarts %d, ready %v)", p.Namespace, p.Name, c.Name, c.RestartCount, c.Ready))
			out, err := kubectl(ctx, "-n", p.Namespace, "logs", p.Name, "-c", c.Name, "--tail=40")
			fmt.Fprint(w, out, errText(err))
			if c.RestartCount > 0 {
				section(fmt.Sprintf("previous logs of %s/%s", p.Namespace, p.Name))
				out, err := kubectl(ctx, "-n", p.Namespace, "logs", p.Name, "-c", c.Name, "--previous", "--tail=25")
				fmt.Fprint(w, out, errText(err))
			}
		}
	}

	section("node log (tail)")
	fmt.Fprintln(w, tailFile(filepath.Join(s.cluster.LogDir(), "node.log"), 30))
	fmt.Fprintf(w, "\ncontrol plane and node logs: %s; every pod's logs, deleted pods too: %s; port-forward and kairoctl logs: %s\n",
		s.cluster.LogDir(), filepath.Join(s.workDir, "pod-logs"), s.workDir)
}

// describeResources lists every KairoCluster, Topic and ConsumerGroup with
// its conditions and the status a person checks first.
func describeResources(ctx context.Context) string {
	var b strings.Builder
	conds := func(cs []metav1.Condition) {
		for _, c := range cs {
			fmt.Fprintf(&b, "    %s=%s %s (gen %d): %s\n", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
		}
	}
	kcs := &kairov1alpha1.KairoClusterList{}
	if err := s.k8s.List(ctx, kcs); err != nil {
		fmt.Fprintf(&b, "KairoClusters: %v\n", err)
	}
	for _, kc := range kcs.Items {
		st := kc.Status
		ctl := "none"
		if st.ControllerID != nil {
			ctl = fmt.Sprint(*st.ControllerID)
		}
		fmt.Fprintf(&b, "KairoCluster %s/%s gen %d observed %d: replicas %d ready %d controller %s\n",
			kc.Namespace, kc.Name, kc.Generation, st.ObservedGeneration, st.Replicas, st.ReadyReplicas, ctl)
		for _, br := range st.Brokers {
			fmt.Fprintf(&b, "    broker %d %s ready=%v state=%s partitions=%d leaders=%d under-replicated=%d\n",
				br.ID, br.Pod, br.Ready, br.State, br.Partitions, br.Leaders, br.UnderReplicated)
		}
		conds(st.Conditions)
	}
	kts := &kairov1alpha1.TopicList{}
	if err := s.k8s.List(ctx, kts); err != nil {
		fmt.Fprintf(&b, "Topics: %v\n", err)
	}
	for _, t := range kts.Items {
		fmt.Fprintf(&b, "Topic %s/%s gen %d observed %d: partitions %d, under-replicated %d, offline %d, finalizers %v\n",
			t.Namespace, t.Name, t.Generation, t.Status.ObservedGeneration, t.Status.Partitions,
			t.Status.UnderReplicatedPartitions, t.Status.OfflinePartitions, t.Finalizers)
		for _, p := range t.Status.PartitionStatuses {
			fmt.Fprintf(&b, "    partition %d leader %d replicas %v isr %v hw %d\n", p.Partition, p.Leader, p.Replicas, p.ISR, p.HighWatermark)
		}
		conds(t.Status.Conditions)
	}
	kcgs := &kairov1alpha1.ConsumerGroupList{}
	if err := s.k8s.List(ctx, kcgs); err != nil {
		fmt.Fprintf(&b, "ConsumerGroups: %v\n", err)
	}
	for _, g := range kcgs.Items {
		fmt.Fprintf(&b, "ConsumerGroup %s/%s: state %s, members %d, total lag %d\n",
			g.Namespace, g.Name, g.Status.State, g.Status.MemberCount, g.Status.TotalLag)
		conds(g.Status.Conditions)
	}
	return b.String()
}

// conditionOf returns a condition by type, or a placeholder saying it is
// missing, for messages.
func conditionOf(cs []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(cs, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: "Missing"}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "error: " + err.Error() + "\n"
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 256<<10 {
		_, _ = f.Seek(st.Size()-256<<10, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(tailLines(string(b), n), "\n")
	for i, l := range lines {
		if len(l) > 300 { // the node's errors carry whole stack traces
			lines[i] = l[:300] + " …"
		}
	}
	return strings.Join(lines, "\n")
}

// keepPodLogs copies every container log of the node's pod sandboxes into
// the run's directory every two seconds, so the logs of pods that a rolling
// restart or a scale down deleted (and the node removed with their
// sandboxes) are still there to read after a failure.
func keepPodLogs() {
	src := filepath.Join(s.cluster.StateDir(), "pods")
	dst := filepath.Join(s.workDir, "pod-logs")
	stop := make(chan struct{})
	done := make(chan struct{})
	copyAll := func() {
		logs, _ := filepath.Glob(filepath.Join(src, "*", "logs", "*", "*.log"))
		for _, from := range logs {
			rel, err := filepath.Rel(src, from)
			if err != nil {
				continue
			}
			to := filepath.Join(dst, rel)
			fi, err := os.Stat(from)
			if err != nil {
				continue
			}
			if ti, err := os.Stat(to); err == nil && ti.Size() == fi.Size() {
				continue
			}
			b, err := os.ReadFile(from)
			if err != nil {
				continue
			}
			_ = os.MkdirAll(filepath.Dir(to), 0o755)
			_ = os.WriteFile(to, b, 0o644)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				copyAll()
			}
		}
	}()
	onCleanup(func() { close(stop); <-done })
}
