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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/controllers/resources"
)

// restartExpectation remembers the pod the operator deleted last, so that a
// cache that has not seen the deletion yet cannot make it restart a second
// broker.
type restartExpectation struct {
	pod string
	uid types.UID
	at  time.Time
}

// podView is what the restart plan needs to know of one broker pod.
type podView struct {
	exists      bool
	terminating bool
	ready       bool
	// running: the broker container is running (it may serve while the
	// pod is not ready).
	running bool
	hash    string
}

// restartInput is everything planRestart decides from.
type restartInput struct {
	// hash is the StatefulSet's current pod template hash.
	hash string
	// replicas is the StatefulSet's replicas; pods 0..replicas-1 count.
	replicas int32
	// templateObserved: the StatefulSet controller has seen the current
	// template, so a deleted pod comes back with it.
	templateObserved bool
	// deleting names a pod the operator deleted that the cache still shows.
	deleting string
	pods     map[int32]podView
	// brokers by id from the admin API; nil when it could not be reached.
	brokers map[int32]api.BrokerInfo
	// controller is the broker leading the metadata quorum.
	controller int32
}

// restartPlan is planRestart's decision.
type restartPlan struct {
	// outdated are the brokers whose pods run an older template.
	outdated []int32
	// restart is the broker to restart now, or -1.
	restart int32
	// askBrokers: restart only if the brokers say it is safe. False for a
	// broker that is down anyway (fenced or not running), since restarting
	// it takes nothing down.
	askBrokers bool
	// wait says why nothing is restarted now.
	wait string
}

// planRestart picks at most one broker to restart so that the operator
// never has two brokers down at once:
//
//   - nothing happens until the StatefulSet controller has seen the current
//     template and every pod of the StatefulSet exists;
//   - an outdated broker that is down already — its container is not
//     running, or the metadata shows it fenced or does not list it — is
//     restarted first, without asking (it serves nothing, so restarting it
//     costs nothing), one at a time;
//   - an outdated broker whose pod is not ready but which runs and is not
//     fenced may still lead partitions and sit in ISRs: it goes next, and
//     only if the brokers say that stopping it is safe (with the admin API
//     unreachable the plan waits);
//   - otherwise every pod must be ready and every broker alive and back in
//     the ISR of every partition it holds — which is also how the operator
//     waits for the broker it restarted last;
//   - then the highest outdated id goes first and the controller (the
//     quorum leader) last, and only if the brokers say that stopping it
//     leaves every partition at min.insync.replicas.
func planRestart(in restartInput) restartPlan {
	plan := restartPlan{restart: -1}
	for id := int32(0); id < in.replicas; id++ {
		if p := in.pods[id]; p.exists && p.hash != in.hash {
			plan.outdated = append(plan.outdated, id)
		}
	}
	if len(plan.outdated) == 0 {
		return plan
	}
	if !in.templateObserved {
		plan.wait = "waiting for the StatefulSet controller to see the new pod template"
		return plan
	}
	if in.deleting != "" {
		plan.wait = fmt.Sprintf("waiting for pod %s to stop", in.deleting)
		return plan
	}
	var downOutdated, notReadyOutdated, downCurrent []int32
	for id := int32(0); id < in.replicas; id++ {
		p := in.pods[id]
		switch {
		case !p.exists || p.terminating:
			plan.wait = fmt.Sprintf("waiting for the pod of broker %d to be recreated", id)
			return plan
		case p.ready:
		case p.hash != in.hash && in.down(id):
			downOutdated = append(downOutdated, id)
		case p.hash != in.hash:
			notReadyOutdated = append(notReadyOutdated, id)
		default:
			downCurrent = append(downCurrent, id)
		}
	}
	if len(downCurrent) > 0 {
		plan.wait = fmt.Sprintf("waiting for brokers %v to be ready", downCurrent)
		return plan
	}
	if len(downOutdated) > 0 {
		plan.restart = slices.Max(downOutdated)
		return plan
	}
	if len(notReadyOutdated) > 0 {
		id := slices.Max(notReadyOutdated)
		if in.brokers == nil {
			plan.wait = fmt.Sprintf("waiting for the broker admin API: broker %d is not ready but running, and may still serve", id)
			return plan
		}
		plan.restart, plan.askBrokers = id, true
		return plan
	}
	if in.brokers == nil {
		plan.wait = "waiting for the broker admin API"
		return plan
	}
	var behind []int32
	for id := int32(0); id < in.replicas; id++ {
		b, ok := in.brokers[id]
		if !ok || b.State != api.BrokerAlive || !b.InSync {
			behind = append(behind, id)
		}
	}
	if len(behind) > 0 {
		plan.wait = fmt.Sprintf("waiting for brokers %v to be alive and back in every ISR", behind)
		return plan
	}
	order := slices.Clone(plan.outdated)
	slices.SortFunc(order, func(a, b int32) int {
		if (a == in.controller) != (b == in.controller) {
			if a == in.controller {
				return 1
			}
			return -1
		}
		return int(b - a)
	})
	plan.restart, plan.askBrokers = order[0], true
	return plan
}

// down reports a broker that serves nothing: its container is not running,
// or the metadata (when the admin API answered) shows it fenced or does
// not list it at all. A pod that is only not ready is not down: its broker
// may still lead partitions and count in their ISRs.
func (in restartInput) down(id int32) bool {
	if !in.pods[id].running {
		return true
	}
	if in.brokers == nil {
		return false
	}
	b, ok := in.brokers[id]
	return !ok || b.State == api.BrokerFenced
}

// rollingRestart restarts brokers whose pods run an outdated template, one
// at a time, as planRestart decides. The StatefulSet updates pods OnDelete,
// so deleting a pod is the restart: the StatefulSet controller recreates it
// from the current template on the same volume.
func (r *KairoClusterReconciler) rollingRestart(ctx context.Context, st *reconcileState) (bool, error) {
	for _, f := range st.progressing {
		if f.reason == ReasonDraining || f.reason == ReasonScalingDown {
			return true, nil // one kind of change at a time
		}
	}
	in := restartInput{
		hash:             st.sts.Spec.Template.Annotations[resources.ConfigHashAnnotation],
		replicas:         st.replicas(),
		templateObserved: st.sts.Status.ObservedGeneration >= st.sts.Generation,
		deleting:         r.pendingRestart(st),
		pods:             map[int32]podView{},
		controller:       -1,
	}
	for id, pod := range st.pods {
		in.pods[id] = podView{exists: true, terminating: !pod.DeletionTimestamp.IsZero(), ready: podReady(pod),
			running: containerRunning(pod, resources.ContainerName), hash: pod.Annotations[resources.ConfigHashAnnotation]}
	}
	if st.meta != nil {
		in.brokers = map[int32]api.BrokerInfo{}
		for _, b := range st.meta.Brokers {
			in.brokers[b.ID] = b
		}
		in.controller = st.meta.ControllerID
	}
	plan := planRestart(in)
	if len(plan.outdated) == 0 {
		return true, nil
	}
	left := fmt.Sprintf("%d of %d brokers run an outdated pod template", len(plan.outdated), in.replicas)
	if plan.restart < 0 {
		st.progress(ReasonRollingRestart, left+"; "+plan.wait)
		return true, nil
	}
	id := plan.restart
	if plan.askBrokers {
		safe, err := st.brokers.SafeToRestart(ctx, id)
		if err != nil {
			st.progress(ReasonRollingRestart, fmt.Sprintf("%s; asking whether broker %d can restart failed: %v", left, id, err))
			return true, nil
		}
		if !safe.Safe {
			st.progress(ReasonRollingRestart, fmt.Sprintf("%s; waiting: restarting broker %d now would leave %s",
				left, id, unsafeRestart(safe)))
			return true, nil
		}
	}
	pod := st.pods[id]
	if err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return false, err
	}
	r.expectRestart(st.key, pod)
	st.log.Info("Restarting broker", "broker", id, "pod", pod.Name, "outdated", len(plan.outdated))
	r.event(st.cluster, pod, corev1.EventTypeNormal, ReasonRestartingBroker, "Restart",
		"Restarting broker %d (pod %s) to apply the new pod template; %d of %d brokers outdated",
		id, pod.Name, len(plan.outdated), in.replicas)
	st.progress(ReasonRollingRestart, fmt.Sprintf("%s; restarting broker %d", left, id))
	return true, nil
}

// unsafeRestart explains a safe-to-restart refusal.
func unsafeRestart(s *api.SafeToRestart) string {
	var parts []string
	for i, b := range s.Blocking {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(s.Blocking)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s-%d (ISR %v, min.insync.replicas %d)", b.Topic, b.Partition, b.ISR, b.MinInsyncReplicas))
	}
	if len(parts) > 0 {
		return "partitions below min.insync.replicas: " + strings.Join(parts, ", ")
	}
	if len(s.Reasons) > 0 {
		return strings.Join(s.Reasons, "; ")
	}
	return "the cluster unsafe"
}

func (r *KairoClusterReconciler) expectRestart(key types.NamespacedName, pod *corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.restarts == nil {
		r.restarts = map[types.NamespacedName]restartExpectation{}
	}
	r.restarts[key] = restartExpectation{pod: pod.Name, uid: pod.UID, at: time.Now()}
}

// pendingRestart names the pod the operator deleted last while the cache
// still shows it, and forgets the deletion once it does not.
func (r *KairoClusterReconciler) pendingRestart(st *reconcileState) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	exp, ok := r.restarts[st.key]
	if !ok {
		return ""
	}
	if time.Since(exp.at) < expectationTimeout {
		for _, pod := range st.pods {
			if pod.Name == exp.pod && pod.UID == exp.uid {
				return exp.pod
			}
		}
	}
	delete(r.restarts, st.key)
	return ""
}

// containerRunning reports whether the pod's container name is running,
// as the kubelet last reported it.
func containerRunning(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == name {
			return c.State.Running != nil
		}
	}
	return false
}
