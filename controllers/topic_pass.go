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
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	brokerclient "github.com/kairolog/kairolog/broker/client"
)

// maxPartitionStatuses caps status.partitionStatuses so that a topic with
// thousands of partitions keeps a small status; the counts cover them all.
const maxPartitionStatuses = 256

// topicPass is one reconcile of one Topic: what was read at its start and
// the status it builds.
type topicPass struct {
	r         *TopicReconciler
	topic     *kairov1alpha1.Topic
	cluster   *kairov1alpha1.KairoCluster
	claimants []metav1.Object
	// name is the topic's name on the brokers.
	name string
	// status is the status this pass writes if it differs from the stored one.
	status kairov1alpha1.TopicStatus
	// released is set once the finalizer is gone: the object may be too.
	released bool
}

// reconcile makes the topic match the spec. It stops at the first phase that
// cannot go on and says why in the Ready condition.
func (p *topicPass) reconcile(ctx context.Context) (ctrl.Result, error) {
	t := p.topic
	p.status.TopicName = p.name
	if p.cluster == nil {
		return p.waitForCluster(fmt.Sprintf("KairoCluster %q does not exist", t.Spec.ClusterRef.Name))
	}
	if p.cluster.DeletionTimestamp != nil {
		return p.waitForCluster(fmt.Sprintf("KairoCluster %q is being deleted", t.Spec.ClusterRef.Name))
	}
	if o := owner(p.claimants); o != nil && o.GetUID() != t.UID {
		return p.conflict(o)
	}
	if err := setFinalizer(ctx, p.r.Client, t, t.Spec.DeletionPolicy != kairov1alpha1.DeletionPolicyRetain); err != nil {
		return ctrl.Result{}, err
	}
	bc, err := p.r.Brokers.For(p.cluster)
	if err != nil {
		return p.failed(brokerFailure{reason: ReasonClusterNotReady,
			message: fmt.Sprintf("No client for the brokers of KairoCluster %q: %v", p.cluster.Name, err)})
	}

	desc, action, stop := p.ensureExists(ctx, bc)
	if stop != nil {
		return stop.res, stop.err
	}
	if desc.TopicID != p.status.TopicID && action == "" {
		if stop := p.adopt(desc); stop != nil {
			return stop.res, stop.err
		}
		action = ReasonAdopted
	}
	p.status.TopicID = desc.TopicID

	if desc.PartitionCount > t.Spec.Partitions {
		p.observe(desc)
		p.status.ObservedGeneration = t.Generation
		p.setReady(metav1.ConditionFalse, ReasonNotSupported, corev1.EventTypeWarning, fmt.Sprintf(
			"Topic %q has %d partitions on the brokers and the spec asks for %d; partitions cannot be decreased",
			p.name, desc.PartitionCount, t.Spec.Partitions))
		return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
	}
	changed, failure := p.converge(ctx, bc, desc, action)
	if failure != nil {
		return p.failed(*failure)
	}
	if changed {
		if desc, err = bc.DescribeTopic(ctx, p.name); err != nil {
			return p.failed(classify(p.cluster, "Describe topic "+p.name, err))
		}
		if action == "" {
			action = ReasonUpdated
		}
	}
	p.observe(desc)
	p.status.ObservedGeneration = t.Generation

	if reassigning(desc) {
		p.setReady(metav1.ConditionFalse, ReasonReassigning, corev1.EventTypeNormal, fmt.Sprintf(
			"Topic %q is moving its replicas to %d per partition", p.name, desc.ReplicationFactor))
		return ctrl.Result{RequeueAfter: pollAfter(p.r.resync())}, nil
	}
	reason := action
	if reason == "" {
		reason = readyReason(p.status.Conditions)
		if prev := meta.FindStatusCondition(p.status.Conditions, kairov1alpha1.ConditionReady); prev != nil && prev.Reason == ReasonReassigning {
			reason = ReasonUpdated // the replica change this resource started is done
		} else if reason == "" {
			reason = ReasonInSync
		}
	}
	p.setReady(metav1.ConditionTrue, reason, corev1.EventTypeNormal, p.summary(desc))
	return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
}

// passEnd ends a pass early with this result.
type passEnd struct {
	res ctrl.Result
	err error
}

func endWith(res ctrl.Result, err error) *passEnd { return &passEnd{res: res, err: err} }

// ensureExists returns the topic's description, creating the topic when
// this resource has not created or adopted it yet, or when it was deleted
// out of band and the spec asks for it back. action is Created or Recreated
// when it did. A non-nil passEnd ends the pass.
func (p *topicPass) ensureExists(ctx context.Context, bc *brokerclient.Client) (
	desc *brokerclient.TopicDescription, action string, stop *passEnd) {
	t := p.topic
	// Most new Topics name a topic that does not exist yet: create first and
	// describe after, one call fewer than asking first. A Topic that found
	// an incompatible topic last time asks first, so that it does not send
	// a doomed create every resync.
	if p.status.TopicID == "" && !p.refusedAdoption() {
		_, cerr := bc.CreateTopic(ctx, p.createRequest())
		switch {
		case cerr == nil:
			action = ReasonCreated
		case brokerclient.IsCode(cerr, brokerclient.CodeTopicAlreadyExists):
			// Adopted below if it fits the spec.
		default:
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name, cerr)))
		}
	}
	desc, derr := bc.DescribeTopic(ctx, p.name)
	if brokerclient.IsCode(derr, brokerclient.CodeUnknownTopic) && p.status.TopicID == "" && action == "" {
		// The incompatible topic is gone: create the spec's own.
		_, cerr := bc.CreateTopic(ctx, p.createRequest())
		switch {
		case cerr == nil:
			action = ReasonCreated
		case !brokerclient.IsCode(cerr, brokerclient.CodeTopicAlreadyExists):
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name, cerr)))
		}
		desc, derr = bc.DescribeTopic(ctx, p.name)
	}
	if brokerclient.IsCode(derr, brokerclient.CodeUnknownTopic) && p.status.TopicID != "" {
		if !t.Spec.RecreateIfDeleted {
			return nil, "", endWith(p.deletedOutOfBand())
		}
		if _, cerr := bc.CreateTopic(ctx, p.createRequest()); cerr != nil &&
			!brokerclient.IsCode(cerr, brokerclient.CodeTopicAlreadyExists) {
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name+" again", cerr)))
		}
		action = ReasonRecreated
		p.event(corev1.EventTypeNormal, ReasonTopicRecreated, "Create",
			"Topic %q was deleted on the brokers out of band and was created again (spec.recreateIfDeleted)", p.name)
		desc, derr = bc.DescribeTopic(ctx, p.name)
	}
	if brokerclient.IsCode(derr, brokerclient.CodeUnknownTopic) {
		// Just created through another broker, whose metadata has not
		// reached this one yet: look again shortly.
		return nil, "", endWith(ctrl.Result{}, errBrokerRetry{msg: fmt.Sprintf("topic %q not visible yet after creation", p.name)})
	}
	if derr != nil {
		return nil, "", endWith(p.failed(classify(p.cluster, "Describe topic "+p.name, derr)))
	}
	if action == ReasonCreated {
		p.event(corev1.EventTypeNormal, ReasonTopicCreated, "Create",
			"Created topic %q with %d partitions and %d replicas (id %s)", p.name, desc.PartitionCount, desc.ReplicationFactor, desc.TopicID)
	}
	return desc, action, nil
}

// refusedAdoption reports whether the last pass found an incompatible topic.
func (p *topicPass) refusedAdoption() bool {
	c := meta.FindStatusCondition(p.status.Conditions, kairov1alpha1.ConditionReady)
	return c != nil && c.Reason == ReasonIncompatible
}

func (p *topicPass) createRequest() brokerclient.CreateTopicRequest {
	req := brokerclient.CreateTopicRequest{Name: p.name, Partitions: p.topic.Spec.Partitions, Config: p.topic.Spec.Config}
	if p.topic.Spec.Replicas != nil {
		req.ReplicationFactor = int16(*p.topic.Spec.Replicas)
	}
	return req
}

// adopt takes over a topic this resource did not create: one that existed
// before the resource, or one someone deleted and created again. It is
// adopted only when the spec can reach it without decreasing partitions or
// moving replicas; otherwise the pass ends with Ready=False Incompatible and
// the topic is left alone (and is not deleted with the resource).
func (p *topicPass) adopt(desc *brokerclient.TopicDescription) *passEnd {
	t := p.topic
	var why []string
	if desc.PartitionCount > t.Spec.Partitions {
		why = append(why, fmt.Sprintf("it has %d partitions and the spec asks for %d (partitions cannot be decreased)",
			desc.PartitionCount, t.Spec.Partitions))
	}
	if t.Spec.Replicas != nil && int32(desc.ReplicationFactor) != *t.Spec.Replicas {
		why = append(why, fmt.Sprintf("it has %d replicas and the spec asks for %d", desc.ReplicationFactor, *t.Spec.Replicas))
	}
	if len(why) > 0 {
		p.clearObserved()
		p.status.ObservedGeneration = t.Generation
		p.setReady(metav1.ConditionFalse, ReasonIncompatible, corev1.EventTypeWarning, fmt.Sprintf(
			"Topic %q already exists on the brokers and was not adopted: %s", p.name, strings.Join(why, "; ")))
		return endWith(ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil)
	}
	if p.status.TopicID != "" {
		p.event(corev1.EventTypeWarning, ReasonTopicReplaced, "Adopt",
			"Topic %q was deleted and created again on the brokers out of band (id %s, was %s); adopting it", p.name, desc.TopicID, p.status.TopicID)
	} else {
		p.event(corev1.EventTypeNormal, ReasonTopicAdopted, "Adopt",
			"Adopted existing topic %q with %d partitions and %d replicas (id %s)", p.name, desc.PartitionCount, desc.ReplicationFactor, desc.TopicID)
	}
	return nil
}

// converge raises partitions, sets the config overrides and the replication
// factor to the spec. It reports whether it changed anything.
func (p *topicPass) converge(ctx context.Context, bc *brokerclient.Client, desc *brokerclient.TopicDescription, action string) (bool, *brokerFailure) {
	t := p.topic
	log := logf.FromContext(ctx)
	changed := false
	if desc.PartitionCount < t.Spec.Partitions {
		if _, err := bc.AddPartitions(ctx, p.name, t.Spec.Partitions); err != nil {
			f := classify(p.cluster, "Increase partitions of topic "+p.name, err)
			return false, &f
		}
		log.Info("Increased topic partitions", "topic", p.name, "from", desc.PartitionCount, "to", t.Spec.Partitions)
		p.event(corev1.EventTypeNormal, ReasonPartitionsIncreased, "Update",
			"Increased partitions of topic %q from %d to %d", p.name, desc.PartitionCount, t.Spec.Partitions)
		changed = true
	}
	if !sameConfig(desc.Config, t.Spec.Config) {
		if _, err := bc.SetTopicConfig(ctx, p.name, t.Spec.Config); err != nil {
			f := classify(p.cluster, "Set config of topic "+p.name, err)
			return false, &f
		}
		// With the spec unchanged since the last good pass, someone else
		// changed the topic: say so, it is worth knowing.
		if action == "" && t.Generation == t.Status.ObservedGeneration {
			log.Info("Reverted topic config changed out of band", "topic", p.name, "found", desc.Config)
			p.event(corev1.EventTypeWarning, ReasonConfigDriftReverted, "Update",
				"Config of topic %q was changed on the brokers out of band (%s); set back to the spec", p.name, configString(desc.Config))
		} else {
			log.Info("Set topic config", "topic", p.name, "config", t.Spec.Config)
			p.event(corev1.EventTypeNormal, ReasonConfigUpdated, "Update",
				"Set config of topic %q to %s", p.name, configString(t.Spec.Config))
		}
		changed = true
	}
	if t.Spec.Replicas != nil && int32(desc.ReplicationFactor) != *t.Spec.Replicas {
		if _, err := bc.SetReplicationFactor(ctx, p.name, int16(*t.Spec.Replicas)); err != nil {
			f := classify(p.cluster, "Change replicas of topic "+p.name, err)
			return false, &f
		}
		log.Info("Changing topic replicas", "topic", p.name, "from", desc.ReplicationFactor, "to", *t.Spec.Replicas)
		p.event(corev1.EventTypeNormal, ReasonReplicasChanging, "Update",
			"Moving topic %q from %d to %d replicas per partition", p.name, desc.ReplicationFactor, *t.Spec.Replicas)
		changed = true
	}
	return changed, nil
}

// sameConfig compares the broker's overrides with the spec's. Integers are
// compared as numbers so that "007" in a spec does not look like drift
// against a broker that stores "7".
func sameConfig(broker, spec map[string]string) bool {
	if len(broker) != len(spec) {
		return false
	}
	for k, want := range spec {
		got, ok := broker[k]
		if !ok {
			return false
		}
		if got == want {
			continue
		}
		g, err1 := strconv.ParseInt(got, 10, 64)
		w, err2 := strconv.ParseInt(want, 10, 64)
		if err1 != nil || err2 != nil || g != w {
			return false
		}
	}
	return true
}

// configString prints a config map with sorted keys, for events.
func configString(cfg map[string]string) string {
	if len(cfg) == 0 {
		return "{}"
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(cfg)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%s", k, cfg[k])
	}
	return "{" + b.String() + "}"
}

func reassigning(desc *brokerclient.TopicDescription) bool {
	for _, pd := range desc.Partitions {
		if len(pd.Adding) > 0 || len(pd.Removing) > 0 {
			return true
		}
	}
	return false
}

// observe copies what the brokers report into the status.
func (p *topicPass) observe(desc *brokerclient.TopicDescription) {
	st := &p.status
	st.TopicID = desc.TopicID
	st.Partitions = desc.PartitionCount
	st.Replicas = int32(desc.ReplicationFactor)
	st.UnderReplicatedPartitions, st.OfflinePartitions = 0, 0
	var parts []kairov1alpha1.PartitionStatus
	for _, pd := range desc.Partitions {
		if len(pd.ISR) < len(pd.Replicas) {
			st.UnderReplicatedPartitions++
		}
		if pd.Leader < 0 {
			st.OfflinePartitions++
		}
		if len(parts) < maxPartitionStatuses {
			parts = append(parts, kairov1alpha1.PartitionStatus{Partition: pd.Partition, Leader: pd.Leader,
				Replicas: pd.Replicas, ISR: pd.ISR, HighWatermark: pd.HighWatermark})
		}
	}
	slices.SortFunc(parts, func(a, b kairov1alpha1.PartitionStatus) int { return int(a.Partition - b.Partition) })
	st.PartitionStatuses = parts
}

// clearObserved forgets what was observed of a topic this resource does not
// manage (a conflict, a refused adoption).
func (p *topicPass) clearObserved() {
	st := &p.status
	st.TopicID, st.Partitions, st.Replicas = "", 0, 0
	st.UnderReplicatedPartitions, st.OfflinePartitions, st.PartitionStatuses = 0, 0, nil
}

// summary is the Ready message of a topic that matches its spec.
func (p *topicPass) summary(desc *brokerclient.TopicDescription) string {
	msg := fmt.Sprintf("Topic %q has %d partitions with %d replicas", p.name, desc.PartitionCount, desc.ReplicationFactor)
	if n := p.status.UnderReplicatedPartitions; n > 0 {
		msg += fmt.Sprintf("; %d under-replicated", n)
	}
	if n := p.status.OfflinePartitions; n > 0 {
		msg += fmt.Sprintf("; %d offline", n)
	}
	return msg
}

// setReady sets the Ready condition and, when its status or reason changed,
// sends an event of the given type with the same message.
func (p *topicPass) setReady(status metav1.ConditionStatus, reason, eventType, message string) {
	if setReady(&p.status.Conditions, p.topic.Generation, status, reason, message) && status == metav1.ConditionFalse {
		p.event(eventType, reason, "Reconcile", "%s", message)
	}
}

func (p *topicPass) event(eventType, reason, action, note string, args ...any) {
	recordEvent(p.r.Recorder, p.topic, nil, eventType, reason, action, note, args...)
}

// waitForCluster ends a pass that cannot reach any broker because the
// cluster is missing or going away. The cluster watch wakes the Topic when
// that changes.
func (p *topicPass) waitForCluster(message string) (ctrl.Result, error) {
	p.setReady(metav1.ConditionFalse, ReasonClusterNotReady, corev1.EventTypeWarning, message)
	return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
}

// conflict ends the pass of a Topic that names a topic an older Topic
// manages. It never calls the brokers.
func (p *topicPass) conflict(o metav1.Object) (ctrl.Result, error) {
	p.clearObserved()
	p.status.ObservedGeneration = p.topic.Generation
	p.setReady(metav1.ConditionFalse, ReasonConflict, corev1.EventTypeWarning, fmt.Sprintf(
		"Topic %q on KairoCluster %q is managed by the older Topic %q", p.name, p.topic.Spec.ClusterRef.Name, o.GetName()))
	return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
}

// deletedOutOfBand reports a managed topic that someone deleted on the
// brokers while spec.recreateIfDeleted is off. The topic id stays in status
// so that the next pass still knows the topic existed.
func (p *topicPass) deletedOutOfBand() (ctrl.Result, error) {
	id := p.status.TopicID
	p.clearObserved()
	p.status.TopicID = id
	p.status.ObservedGeneration = p.topic.Generation
	if setReady(&p.status.Conditions, p.topic.Generation, metav1.ConditionFalse, ReasonDeletedOutOfBand, fmt.Sprintf(
		"Topic %q was deleted on the brokers out of band; set spec.recreateIfDeleted to create it again", p.name)) {
		p.event(corev1.EventTypeWarning, ReasonTopicDeletedOutOfBand, "Observe",
			"Topic %q (id %s) was deleted on the brokers out of band; it is not recreated unless spec.recreateIfDeleted is set", p.name, id)
	}
	return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
}

// failed records a failed broker call. Transient failures return an error
// so the rate limiter backs off; the others wait for the next resync.
func (p *topicPass) failed(f brokerFailure) (ctrl.Result, error) {
	p.setReady(metav1.ConditionFalse, f.reason, corev1.EventTypeWarning, f.message)
	if f.transient {
		return ctrl.Result{}, errBrokerRetry{msg: f.message}
	}
	return ctrl.Result{RequeueAfter: resyncAfter(p.r.resync())}, nil
}

// finalize runs when the Topic is being deleted. It deletes the topic on the
// brokers when the policy is Delete and this resource manages it, then
// releases the finalizer. It never waits for a cluster that is gone or being
// deleted, and it never deletes a topic another live Topic still manages or
// one this resource never created or adopted.
func (p *topicPass) finalize(ctx context.Context) (ctrl.Result, error) {
	t := p.topic
	if !controllerutil.ContainsFinalizer(t, kairov1alpha1.FinalizerName) {
		return ctrl.Result{}, nil
	}
	switch {
	case t.Spec.DeletionPolicy == kairov1alpha1.DeletionPolicyRetain:
		return p.release(ctx, corev1.EventTypeNormal, ReasonTopicRetained, "Left topic %q on the brokers (deletionPolicy Retain)", p.name)
	case p.cluster == nil:
		return p.release(ctx, corev1.EventTypeWarning, ReasonFinalizerReleased,
			"KairoCluster %q is gone; topic %q was not deleted on the brokers", t.Spec.ClusterRef.Name, p.name)
	case p.cluster.DeletionTimestamp != nil:
		return p.release(ctx, corev1.EventTypeWarning, ReasonFinalizerReleased,
			"KairoCluster %q is being deleted; topic %q was not deleted on the brokers", t.Spec.ClusterRef.Name, p.name)
	}
	if o := otherLiveClaimant(p.claimants, t); o != nil {
		return p.release(ctx, corev1.EventTypeNormal, ReasonHandedOver,
			"Topic %q is still managed by Topic %q; it was not deleted on the brokers", p.name, o.GetName())
	}
	if p.status.TopicID == "" {
		return p.release(ctx, corev1.EventTypeNormal, ReasonTopicRetained,
			"This resource never created or adopted topic %q; it was left on the brokers", p.name)
	}
	bc, err := p.r.Brokers.For(p.cluster)
	if err != nil {
		return p.failed(brokerFailure{reason: ReasonClusterNotReady,
			message: fmt.Sprintf("No client for the brokers of KairoCluster %q: %v", p.cluster.Name, err)})
	}
	desc, err := bc.DescribeTopic(ctx, p.name)
	if brokerclient.IsCode(err, brokerclient.CodeUnknownTopic) {
		return p.release(ctx, corev1.EventTypeNormal, ReasonTopicDeleted, "Topic %q was already gone from the brokers", p.name)
	}
	if err != nil {
		return p.failed(classify(p.cluster, "Describe topic "+p.name+" before deleting it", err))
	}
	if desc.TopicID != p.status.TopicID {
		return p.release(ctx, corev1.EventTypeWarning, ReasonTopicNotOwned,
			"Topic %q on the brokers has id %s, not %s which this resource managed; it was left on the brokers", p.name, desc.TopicID, p.status.TopicID)
	}
	if err := bc.DeleteTopic(ctx, p.name); err != nil && !brokerclient.IsCode(err, brokerclient.CodeUnknownTopic) {
		return p.failed(classify(p.cluster, "Delete topic "+p.name, err))
	}
	logf.FromContext(ctx).Info("Deleted topic on the brokers", "topic", p.name)
	return p.release(ctx, corev1.EventTypeNormal, ReasonTopicDeleted, "Deleted topic %q on the brokers", p.name)
}

// release removes the finalizer and records why.
func (p *topicPass) release(ctx context.Context, eventType, reason, note string, args ...any) (ctrl.Result, error) {
	if err := setFinalizer(ctx, p.r.Client, p.topic, false); err != nil {
		return ctrl.Result{}, err
	}
	p.released = true
	logf.FromContext(ctx).Info("Released the Topic finalizer", "reason", reason)
	p.event(eventType, reason, "Delete", note, args...)
	return ctrl.Result{}, nil
}
