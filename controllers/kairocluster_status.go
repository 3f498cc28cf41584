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
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/controllers/resources"
)

// degradedOrder ranks Degraded reasons: the condition shows the first one
// found, and its message lists them all. A user's mistake comes before the
// state of the brokers, since fixing it is what unblocks the operator.
var degradedOrder = []string{
	ReasonResourceNotOwned,
	ReasonCAUnusable,
	ReasonScaleDownRefused,
	ReasonStorageResizeUnsupported,
	ReasonBrokerWithoutPod,
	ReasonBrokerUnreachable,
	ReasonUnderReplicated,
}

// progressingOrder ranks Progressing reasons the same way.
var progressingOrder = []string{
	ReasonCreating,
	ReasonWaitingForIssuer,
	ReasonDraining,
	ReasonScalingDown,
	ReasonScalingUp,
	ReasonRebalancing,
	ReasonRollingRestart,
	ReasonResizingStorage,
	ReasonDrainCancelled,
}

// writeStatus computes the status from what the pass observed and decided,
// and writes it only if it differs from the stored one, so a quiet cluster
// costs no writes. Condition changes that need a person's attention are
// also emitted as events.
func (r *KairoClusterReconciler) writeStatus(ctx context.Context, st *reconcileState) error {
	c := st.cluster
	observeBrokers(st)
	status := computeStatus(st)
	if equality.Semantic.DeepEqual(c.Status, status) {
		return nil
	}
	orig := c.DeepCopy()
	c.Status = status
	if err := r.Status().Patch(ctx, c, client.MergeFrom(orig)); err != nil {
		return err
	}
	r.conditionEvents(c, orig.Status.Conditions, status.Conditions)
	return nil
}

// computeStatus is the cluster's status after a pass (and after
// observeBrokers added its findings): counts from the pods,
// brokers from the admin API (the last ones observed while it cannot be
// reached), and the four conditions.
func computeStatus(st *reconcileState) kairov1alpha1.KairoClusterStatus {
	c := st.cluster
	s := *c.Status.DeepCopy()
	s.ObservedGeneration = c.Generation
	s.Selector = labels.SelectorFromSet(resources.SelectorLabels(c)).String()
	s.ClientEndpoint = resources.ClientEndpoint(c)
	s.KafkaBootstrap = resources.KafkaBootstrap(c)
	if st.certs != nil {
		s.Security = &kairov1alpha1.SecurityStatus{
			CASecret:             resources.CACertSecretName(c),
			CANotAfter:           ptr.To(metav1.NewTime(st.certs.caNotAfter())),
			CertificatesNotAfter: ptr.To(metav1.NewTime(st.certs.notAfter)),
			PeerTLS:              st.certs.peerTLS,
		}
	}
	if st.pods != nil {
		s.Replicas, s.ReadyReplicas = 0, 0
		for _, pod := range st.pods {
			if pod.DeletionTimestamp.IsZero() {
				s.Replicas++
				if podReady(pod) {
					s.ReadyReplicas++
				}
			}
		}
	}
	podIsReady := func(id int32) bool { pod := st.pods[id]; return pod != nil && podReady(pod) }
	if st.meta != nil {
		s.ControllerID = nil
		if st.meta.ControllerID >= 0 {
			s.ControllerID = ptr.To(st.meta.ControllerID)
		}
		s.Brokers = make([]kairov1alpha1.BrokerStatus, 0, len(st.meta.Brokers))
		for _, b := range st.meta.Brokers {
			s.Brokers = append(s.Brokers, kairov1alpha1.BrokerStatus{
				ID: b.ID, Pod: resources.PodName(c, b.ID), Ready: podIsReady(b.ID), State: b.State,
				Partitions: int32(b.Partitions), Leaders: int32(b.Leaders), UnderReplicated: int32(b.UnderReplicated),
			})
		}
		slices.SortFunc(s.Brokers, func(a, b kairov1alpha1.BrokerStatus) int { return int(a.ID - b.ID) })
	} else if st.pods != nil {
		for i := range s.Brokers {
			s.Brokers[i].Ready = podIsReady(s.Brokers[i].ID)
		}
	}

	gen := c.Generation
	conds := slices.Clone(s.Conditions)
	ready := clusterReadyCondition(st, s)
	ready.ObservedGeneration = gen
	meta.SetStatusCondition(&conds, ready)

	progressing := metav1.Condition{Type: kairov1alpha1.ConditionProgressing, Status: metav1.ConditionFalse,
		Reason: ReasonUpToDate, Message: "The brokers run the current spec", ObservedGeneration: gen}
	if f, msg, ok := pick(st.progressing, progressingOrder); ok {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, f, msg
	}
	meta.SetStatusCondition(&conds, progressing)

	degraded := metav1.Condition{Type: kairov1alpha1.ConditionDegraded, Status: metav1.ConditionFalse,
		Reason: ReasonAsExpected, Message: "No problem found", ObservedGeneration: gen}
	if f, msg, ok := pick(st.degraded, degradedOrder); ok {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, f, msg
	}
	meta.SetStatusCondition(&conds, degraded)

	if voters := quorumVoters(st); voters != nil {
		quorum := quorumCondition(voters)
		quorum.ObservedGeneration = gen
		meta.SetStatusCondition(&conds, quorum)
	}
	s.Conditions = conds
	return s
}

// observeBrokers turns the observed brokers into findings: an unreachable
// admin API, partitions moving between brokers, under-replicated
// partitions, and a cluster still forming.
func observeBrokers(st *reconcileState) {
	if st.sts == nil {
		return
	}
	if !st.created() {
		st.progress(ReasonCreating, fmt.Sprintf("%d of %d brokers ready", st.readyPods(), st.replicas()))
	}
	if st.brokerErr != nil && (st.created() || st.readyPods() > 0) {
		st.degrade(ReasonBrokerUnreachable, fmt.Sprintf("Cannot reach the broker admin API: %v", st.brokerErr))
	}
	if st.meta == nil {
		return
	}
	moving := 0
	for _, t := range st.meta.Topics {
		for _, p := range t.Partitions {
			if len(p.Adding) > 0 || len(p.Removing) > 0 {
				moving++
			}
		}
	}
	if moving > 0 {
		st.progress(ReasonRebalancing, fmt.Sprintf("%d partitions are moving between brokers", moving))
	}
	var under []string
	total := 0
	for _, b := range st.meta.Brokers {
		if b.UnderReplicated > 0 {
			total += b.UnderReplicated
			under = append(under, fmt.Sprintf("%d led by broker %d", b.UnderReplicated, b.ID))
		}
	}
	var fenced []int32
	for _, b := range st.meta.Brokers {
		if b.State == api.BrokerFenced {
			fenced = append(fenced, b.ID)
		}
	}
	switch {
	case total > 0:
		msg := fmt.Sprintf("%d partitions are under-replicated (%s)", total, strings.Join(under, ", "))
		if len(fenced) > 0 {
			msg += fmt.Sprintf("; brokers %v are fenced", fenced)
		}
		st.degrade(ReasonUnderReplicated, msg)
	case len(fenced) > 0:
		st.degrade(ReasonUnderReplicated, fmt.Sprintf("Brokers %v are fenced: they stopped heartbeating the controller", fenced))
	}
}

func clusterReadyCondition(st *reconcileState, s kairov1alpha1.KairoClusterStatus) metav1.Condition {
	cond := metav1.Condition{Type: kairov1alpha1.ConditionReady, Status: metav1.ConditionFalse}
	want := st.cluster.Spec.Replicas
	counts := fmt.Sprintf("%d of %d brokers ready", st.readyPods(), want)
	if stuck := stuckPods(st.pods); stuck != "" {
		counts += "; " + stuck
	}
	switch {
	case len(st.notOwned) > 0:
		cond.Reason, cond.Message = ReasonResourceNotOwned, fmt.Sprintf("%s is not owned by this KairoCluster", strings.Join(st.notOwned, ", "))
	case st.sts == nil || !st.created():
		cond.Reason, cond.Message = ReasonCreating, counts
	case st.brokerErr != nil:
		cond.Reason, cond.Message = ReasonBrokerUnreachable, counts+"; the broker admin API cannot be reached"
	case st.readyPods() < want || !allAlive(st, want):
		cond.Reason, cond.Message = ReasonBrokersNotReady, counts
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, ReasonClusterReady, counts
	}
	return cond
}

func allAlive(st *reconcileState, want int32) bool {
	for id := int32(0); id < want; id++ {
		if b := st.broker(id); b == nil || b.State != api.BrokerAlive {
			return false
		}
	}
	return true
}

// pick returns the highest-ranked finding's reason and every finding's
// message, in rank order.
func pick(findings []finding, order []string) (string, string, bool) {
	if len(findings) == 0 {
		return "", "", false
	}
	sorted := slices.Clone(findings)
	rank := func(reason string) int {
		if i := slices.Index(order, reason); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(sorted, func(a, b finding) int { return rank(a.reason) - rank(b.reason) })
	msgs := make([]string, 0, len(sorted))
	for _, f := range sorted {
		if !slices.Contains(msgs, f.message) {
			msgs = append(msgs, f.message)
		}
	}
	return sorted[0].reason, strings.Join(msgs, "; "), true
}

// conditionEvents emits an event when the cluster becomes Degraded (or
// degraded for another reason), when it recovers, when it becomes Ready,
// and when its metadata quorum stops or starts tolerating the loss of a
// broker. What was last announced is remembered, so that a pass that read
// the cluster from a cache not yet showing the previous status write does
// not announce the same transition twice.
func (r *KairoClusterReconciler) conditionEvents(c *kairov1alpha1.KairoCluster, before, after []metav1.Condition) {
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	r.mu.Lock()
	if r.announced == nil {
		r.announced = map[types.NamespacedName]announced{}
	}
	last, known := r.announced[key]
	if !known {
		last = announced{
			degraded: degradedReason(before),
			ready:    meta.IsStatusConditionTrue(before, kairov1alpha1.ConditionReady),
			quorum:   quorumReason(before),
		}
	}
	now := announced{
		degraded: degradedReason(after),
		ready:    meta.IsStatusConditionTrue(after, kairov1alpha1.ConditionReady),
		quorum:   quorumReason(after),
	}
	r.announced[key] = now
	r.mu.Unlock()

	if now.degraded != "" && now.degraded != last.degraded {
		r.event(c, nil, corev1.EventTypeWarning, now.degraded, "Reconcile", "%s",
			meta.FindStatusCondition(after, kairov1alpha1.ConditionDegraded).Message)
	}
	if last.degraded != "" && now.degraded == "" {
		r.event(c, nil, corev1.EventTypeNormal, ReasonRecovered, "Reconcile", "No longer degraded (was %s)", last.degraded)
	}
	if now.ready && !last.ready {
		r.event(c, nil, corev1.EventTypeNormal, ReasonClusterReady, "Reconcile", "%s",
			meta.FindStatusCondition(after, kairov1alpha1.ConditionReady).Message)
	}
	// A quorum that cannot lose a broker is announced as soon as it is
	// known; one that can, only when it could not before.
	if q := meta.FindStatusCondition(after, kairov1alpha1.ConditionQuorumFaultTolerant); q != nil && now.quorum != last.quorum {
		switch {
		case q.Status == metav1.ConditionFalse:
			r.event(c, nil, corev1.EventTypeWarning, q.Reason, "Reconcile", "%s", q.Message)
		case last.quorum != "":
			r.event(c, nil, corev1.EventTypeNormal, q.Reason, "Reconcile", "%s", q.Message)
		}
	}
}

// announced is what the events last said about a cluster's conditions.
type announced struct {
	degraded string // the Degraded reason, "" when not degraded
	ready    bool
	quorum   string // the QuorumFaultTolerant reason, "" before it is known
}

func quorumReason(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionQuorumFaultTolerant); c != nil {
		return c.Reason
	}
	return ""
}

func degradedReason(conds []metav1.Condition) string {
	if c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionDegraded); c != nil && c.Status == metav1.ConditionTrue {
		return c.Reason
	}
	return ""
}

// event records an event on the cluster, naming the child it concerns.
func (r *KairoClusterReconciler) event(c *kairov1alpha1.KairoCluster, related runtime.Object, eventType, reason, action, note string, args ...any) {
	recordEvent(r.Recorder, c, related, eventType, reason, action, note, args...)
}
