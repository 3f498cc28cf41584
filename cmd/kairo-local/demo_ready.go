package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// roundTarget is what the produce/fetch round uses: the cluster's client
// Service and a topic of that cluster.
type roundTarget struct {
	namespace, service, topic, group string
}

// waitReady waits until every KairoCluster, Topic and ConsumerGroup of the
// samples' namespace is Ready, printing a line whenever the picture changes.
func (d *demoRun) waitReady(ctx context.Context) (roundTarget, error) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kairov1alpha1.AddToScheme(scheme)
	c, err := client.New(d.cluster.RESTConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return roundTarget{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.o.readyAfter)
	defer cancel()
	const ns = "default"
	last := ""
	for {
		var clusters kairov1alpha1.KairoClusterList
		var topics kairov1alpha1.TopicList
		var groups kairov1alpha1.ConsumerGroupList
		err := errors.Join(c.List(ctx, &clusters, client.InNamespace(ns)),
			c.List(ctx, &topics, client.InNamespace(ns)), c.List(ctx, &groups, client.InNamespace(ns)))
		if err == nil && len(clusters.Items) > 0 {
			var parts []string
			allReady := true
			for _, kc := range clusters.Items {
				ready := meta.IsStatusConditionTrue(kc.Status.Conditions, "Ready")
				allReady = allReady && ready
				parts = append(parts, fmt.Sprintf("kc/%s %s, %d/%d brokers", kc.Name, readiness(ready, kc.Status.Conditions), kc.Status.ReadyReplicas, kc.Spec.Replicas))
			}
			for _, kt := range topics.Items {
				ready := meta.IsStatusConditionTrue(kt.Status.Conditions, "Ready")
				allReady = allReady && ready
				parts = append(parts, "kt/"+kt.Name+" "+readiness(ready, kt.Status.Conditions))
			}
			for _, kcg := range groups.Items {
				ready := meta.IsStatusConditionTrue(kcg.Status.Conditions, "Ready")
				allReady = allReady && ready
				parts = append(parts, "kcg/"+kcg.Name+" "+readiness(ready, kcg.Status.Conditions))
			}
			line := strings.Join(parts, "; ")
			if line != last {
				fmt.Fprintf(d.out, "          %5.1fs  %s\n", time.Since(d.began).Seconds(), line)
				last = line
			}
			if allReady {
				return pickTarget(clusters.Items, topics.Items, groups.Items), nil
			}
		}
		select {
		case <-ctx.Done():
			return roundTarget{}, fmt.Errorf("not Ready after %s: %s", d.o.readyAfter, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readiness is "Ready", or "not Ready (reason)".
func readiness(ready bool, conds []metav1.Condition) string {
	if ready {
		return "Ready"
	}
	if c := meta.FindStatusCondition(conds, "Ready"); c != nil && c.Reason != "" {
		return "not Ready (" + c.Reason + ")"
	}
	return "not Ready"
}

func pickTarget(clusters []kairov1alpha1.KairoCluster, topics []kairov1alpha1.Topic, groups []kairov1alpha1.ConsumerGroup) roundTarget {
	kc := clusters[0]
	t := roundTarget{namespace: kc.Namespace, service: kc.Name}
	for _, kt := range topics {
		if kt.Spec.ClusterRef.Name == kc.Name {
			t.topic = kt.Name
			if kt.Spec.TopicName != "" {
				t.topic = kt.Spec.TopicName
			}
			break
		}
	}
	for _, g := range groups {
		if g.Spec.ClusterRef.Name == kc.Name {
			t.group = g.Name
			if g.Spec.GroupID != "" {
				t.group = g.Spec.GroupID
			}
			break
		}
	}
	return t
}

// showState prints what kubectl shows of the samples, after a failure.
func (d *demoRun) showState(ctx context.Context) {
	cmd := exec.CommandContext(ctx, "kubectl", "get", "kc,kt,kcg,pods", "-o", "wide")
	cmd.Env = d.env
	out, _ := cmd.CombinedOutput()
	fmt.Fprintf(d.out, "\n$ kubectl get kc,kt,kcg,pods -o wide\n%s", out)
}
