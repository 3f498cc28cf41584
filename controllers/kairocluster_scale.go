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
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kairolog/kairolog/broker/api"
)

// scale moves the brokers toward spec.replicas.
//
// Scaling up happened in applyChildren (the StatefulSet grew, and new
// brokers join the quorum by themselves); here new brokers are waited for
// and, with spec.rebalanceOnScaleUp, partitions are rebalanced onto them
// once every broker is in sync.
//
// Scaling down drains the departing brokers (the highest ids) through the
// admin API, and only when they hold no replica does the StatefulSet
// shrink. A broker whose pod is gone and that holds nothing is then removed
// from the cluster metadata. When the remaining brokers cannot hold every
// replica, or the scale down would remove a voter of the metadata quorum,
// the scale down is refused: Degraded/ScaleDownRefused, and nothing moves.
func (r *KairoClusterReconciler) scale(ctx context.Context, st *reconcileState) (bool, error) {
	have, want := st.replicas(), st.cluster.Spec.Replicas
	if st.meta != nil {
		if err := r.cancelDrains(ctx, st, min(have, want)); err != nil {
			return false, err
		}
		r.removeDeparted(ctx, st)
	}
	if want < have {
		return r.scaleDown(ctx, st, have, want)
	}
	return r.awaitScaleUp(ctx, st)
}

// awaitScaleUp reports new brokers that have not joined yet and rebalances
// onto them when asked to.
func (r *KairoClusterReconciler) awaitScaleUp(ctx context.Context, st *reconcileState) (bool, error) {
	pending := st.sts.Annotations[RebalancePendingAnnotation] == "true"
	st.rebalancePending = pending
	if st.meta == nil || !st.created() {
		return true, nil
	}
	var missing []int32
	for id := int32(0); id < st.replicas(); id++ {
		b := st.broker(id)
		if b == nil || b.State != api.BrokerAlive || !b.InSync || st.pods[id] == nil || !podReady(st.pods[id]) {
			missing = append(missing, id)
		}
	}
	newBrokers := false
	for _, id := range missing {
		if st.broker(id) == nil {
			newBrokers = true
		}
	}
	switch {
	case newBrokers:
		st.progress(ReasonScalingUp, fmt.Sprintf("Waiting for brokers %v to join the cluster", missing))
		return true, nil
	case !pending:
		return true, nil
	case len(missing) > 0:
		st.progress(ReasonScalingUp, fmt.Sprintf("Waiting for brokers %v to be ready and in sync before rebalancing", missing))
		return true, nil
	}
	moves, err := st.brokers.RebalanceCluster(ctx)
	if err != nil {
		st.progress(ReasonScalingUp, fmt.Sprintf("Rebalancing partitions onto the new brokers failed: %v", err))
		return true, nil
	}
	st.log.Info("Rebalancing partitions after a scale up", "moves", moves)
	r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonRebalancing, "Rebalance",
		"Rebalancing partitions onto the new brokers: %d partitions move", moves)
	patch := client.MergeFrom(st.sts.DeepCopy())
	delete(st.sts.Annotations, RebalancePendingAnnotation)
	if err := r.Patch(ctx, st.sts, patch); err != nil {
		return false, err
	}
	st.rebalancePending = false
	if moves > 0 {
		st.progress(ReasonRebalancing, fmt.Sprintf("Moving %d partitions onto the new brokers", moves))
	}
	return true, nil
}

// scaleDown drains brokers [want, have) and shrinks the StatefulSet once
// they hold nothing.
func (r *KairoClusterReconciler) scaleDown(ctx context.Context, st *reconcileState, have, want int32) (bool, error) {
	if refusals := scaleDownRefusals(want, st.builder.Voters, st.meta); len(refusals) > 0 {
		st.degrade(ReasonScaleDownRefused, fmt.Sprintf("Cannot scale down to %d brokers: %s; the cluster stays at %d brokers",
			want, strings.Join(refusals, "; "), have))
		return true, nil
	}
	if st.meta == nil {
		st.progress(ReasonDraining, fmt.Sprintf("Waiting for the broker admin API to drain brokers %d to %d", want, have-1))
		return true, nil
	}
	var draining []int32
	for id := have - 1; id >= want; id-- {
		b := st.broker(id)
		if b == nil {
			continue // never joined: nothing to move
		}
		switch {
		case b.State == api.BrokerDrained && b.Partitions == 0 && !placed(st.meta, id):
			continue
		case b.State == api.BrokerDraining || b.State == api.BrokerDrained:
			draining = append(draining, id)
			continue
		}
		// Record the drain as the operator's before starting it, so that
		// only the operator's own drains are ever cancelled.
		if err := r.setOperatorDrains(ctx, st, append(operatorDrains(st.sts), id)); err != nil {
			return false, err
		}
		remaining, err := st.brokers.Drain(ctx, id)
		if api.IsCode(err, api.CodeReassignmentInfeasible) {
			// Brokers this scale down already drained stay drained until
			// spec.replicas asks for them again.
			st.degrade(ReasonScaleDownRefused, fmt.Sprintf(
				"Cannot scale down to %d brokers: broker %d cannot be drained: %s", want, id, adminErrorMessage(err)))
			return true, nil
		}
		if err != nil {
			st.progress(ReasonDraining, fmt.Sprintf("Draining broker %d failed, retrying: %v", id, err))
			return true, nil
		}
		st.log.Info("Draining broker before a scale down", "broker", id, "remainingReplicas", remaining)
		r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonDraining, "Drain",
			"Draining broker %d (%d replicas to move) before scaling down to %d brokers", id, remaining, want)
		if remaining > 0 {
			draining = append(draining, id)
		}
	}
	if len(draining) > 0 {
		st.progress(ReasonDraining, fmt.Sprintf("Moving replicas off brokers %v before scaling down to %d brokers", draining, want))
		return true, nil
	}
	patch := client.MergeFrom(st.sts.DeepCopy())
	st.sts.Spec.Replicas = ptr.To(want)
	if err := r.Patch(ctx, st.sts, patch); err != nil {
		return false, err
	}
	st.builder.Replicas = want
	st.log.Info("Scaling down", "from", have, "to", want)
	r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonScalingDown, "Scale",
		"Scaling down from %d to %d brokers: brokers %d to %d are drained", have, want, want, have-1)
	st.progress(ReasonScalingDown, fmt.Sprintf("Stopping drained brokers %d to %d", want, have-1))
	return true, nil
}

// cancelDrains makes the brokers below keep that the operator drained for a
// scale down take replicas again, because spec.replicas asks for them back.
// A drain someone else started (kairoctl cluster drain) is left alone. The
// operator forgets its drains once cancelled or once the broker is removed.
func (r *KairoClusterReconciler) cancelDrains(ctx context.Context, st *reconcileState, keep int32) error {
	mine := operatorDrains(st.sts)
	var still []int32
	for _, id := range mine {
		b := st.broker(id)
		switch {
		case b == nil:
			continue // removed
		case id >= keep:
			still = append(still, id)
			continue
		case b.State != api.BrokerDraining && b.State != api.BrokerDrained:
			continue
		}
		if err := st.brokers.CancelDrain(ctx, id); err != nil {
			st.progress(ReasonDrainCancelled, fmt.Sprintf("Cancelling the drain of broker %d failed, retrying: %v", id, err))
			still = append(still, id)
			continue
		}
		st.log.Info("Cancelled a drain", "broker", id)
		r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonDrainCancelled, "CancelDrain",
			"Broker %d takes replicas again", id)
	}
	return r.setOperatorDrains(ctx, st, still)
}

// OperatorDrainsAnnotation on the StatefulSet lists the brokers the
// operator drained for a scale down.
const OperatorDrainsAnnotation = "kairolog.io/drained-brokers"

// operatorDrains are the brokers the StatefulSet's annotation lists.
func operatorDrains(sts *appsv1.StatefulSet) []int32 {
	var ids []int32
	for _, f := range strings.Split(sts.Annotations[OperatorDrainsAnnotation], ",") {
		if id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32); err == nil {
			ids = append(ids, int32(id))
		}
	}
	return ids
}

// setOperatorDrains writes the list when it changed.
func (r *KairoClusterReconciler) setOperatorDrains(ctx context.Context, st *reconcileState, ids []int32) error {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if slices.Equal(ids, operatorDrains(st.sts)) {
		return nil
	}
	patch := client.MergeFrom(st.sts.DeepCopy())
	if len(ids) == 0 {
		delete(st.sts.Annotations, OperatorDrainsAnnotation)
	} else {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = strconv.Itoa(int(id))
		}
		st.sts.Annotations = mergeStrings(st.sts.Annotations, map[string]string{OperatorDrainsAnnotation: strings.Join(parts, ",")})
	}
	return r.Patch(ctx, st.sts, patch)
}

// removeDeparted removes from the cluster metadata the brokers beyond the
// StatefulSet whose pods are gone and that hold no replica. One that still
// holds replicas (the StatefulSet was shrunk by someone else) is reported.
func (r *KairoClusterReconciler) removeDeparted(ctx context.Context, st *reconcileState) {
	// A removal whose reply was lost (a timeout) may still have happened:
	// report it once the broker is gone from the metadata.
	for _, id := range r.removalsDone(st) {
		st.log.Info("Removed broker from the cluster", "broker", id)
		r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonBrokerRemoved, "RemoveBroker",
			"Removed broker %d from the cluster metadata and the quorum", id)
	}
	for _, b := range st.meta.Brokers {
		if b.ID < st.replicas() || st.pods[b.ID] != nil {
			continue
		}
		if b.Partitions > 0 {
			st.degrade(ReasonBrokerWithoutPod, fmt.Sprintf(
				"Broker %d holds %d replicas but the StatefulSet no longer runs it; scale back up or drain it", b.ID, b.Partitions))
			continue
		}
		err := st.brokers.RemoveBroker(ctx, b.ID)
		if api.IsCode(err, api.CodeUnknownBroker) {
			continue // removed already; this broker's metadata was a moment behind
		}
		if err != nil {
			st.log.Info("Removing a broker failed; retrying", "broker", b.ID, "error", err.Error())
			st.progress(ReasonScalingDown, fmt.Sprintf("Removing broker %d from the cluster failed, retrying: %v", b.ID, err))
			r.expectRemoval(st.key, b.ID)
			continue
		}
		r.forgetRemoval(st.key, b.ID) // reported now
		st.log.Info("Removed broker from the cluster", "broker", b.ID)
		r.event(st.cluster, st.sts, corev1.EventTypeNormal, ReasonBrokerRemoved, "RemoveBroker",
			"Removed broker %d from the cluster metadata and the quorum", b.ID)
	}
}

// scaleDownRefusals are every reason a scale down to want brokers cannot
// go ahead, so the user learns them all at once rather than one per
// attempt: the quorum's voters cannot be removed, and the topic with the
// highest replication factor needs that many brokers. meta is nil when
// the admin API could not be reached; only the voter rule is known then.
func scaleDownRefusals(want, voters int32, meta *api.Metadata) []string {
	var out []string
	if want < voters {
		out = append(out, fmt.Sprintf("brokers 0 to %d are the voters of the metadata quorum and cannot be removed", voters-1))
	}
	if meta != nil {
		if topic, rf := widestTopic(meta); rf > want {
			out = append(out, fmt.Sprintf("topic %s has %d replicas per partition, so the topics need at least %d brokers", topic, rf, rf))
		}
	}
	return out
}

// widestTopic is the topic with the highest replication factor, which
// needs at least that many brokers; among equals, one of the user's topics
// rather than __consumer_offsets, as the name a user recognises. (A
// partition's replica list is longer while a reassignment adds replicas;
// the factor is what it settles at.)
func widestTopic(meta *api.Metadata) (string, int32) {
	var name string
	var widest int32
	internal := false
	for _, t := range meta.Topics {
		n := int32(t.ReplicationFactor)
		if n > widest || (n == widest && internal && !t.Internal) {
			name, widest, internal = t.Name, n, t.Internal
		}
	}
	return name, widest
}

// placed reports whether any partition still lists broker id as a replica,
// an ISR member, or the source or target of a move in flight. A broker the
// metadata already calls drained can still be the target of a move a
// rebalance started before the drain; it is not empty until that settles.
func placed(meta *api.Metadata, id int32) bool {
	for _, t := range meta.Topics {
		for _, p := range t.Partitions {
			if slices.Contains(p.Replicas, id) || slices.Contains(p.ISR, id) ||
				slices.Contains(p.Adding, id) || slices.Contains(p.Removing, id) {
				return true
			}
		}
	}
	return false
}

// adminErrorMessage is the broker's own words for an API error.
func adminErrorMessage(err error) string {
	var e *api.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// expectRemoval remembers a removal that failed, perhaps only in its reply.
func (r *KairoClusterReconciler) expectRemoval(key types.NamespacedName, id int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removals == nil {
		r.removals = map[types.NamespacedName][]int32{}
	}
	if !slices.Contains(r.removals[key], id) {
		r.removals[key] = append(r.removals[key], id)
	}
}

func (r *KairoClusterReconciler) forgetRemoval(key types.NamespacedName, id int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removals == nil {
		return
	}
	r.removals[key] = slices.DeleteFunc(r.removals[key], func(x int32) bool { return x == id })
}

// removalsDone returns (and forgets) the expected removals the metadata
// shows done: the broker is gone, or it is back below the StatefulSet's
// replicas and no longer departing.
func (r *KairoClusterReconciler) removalsDone(st *reconcileState) []int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var done, left []int32
	for _, id := range r.removals[st.key] {
		switch {
		case st.broker(id) == nil:
			done = append(done, id)
		case id >= st.replicas():
			left = append(left, id)
		}
	}
	if len(left) == 0 {
		delete(r.removals, st.key)
	} else {
		r.removals[st.key] = left
	}
	return done
}
