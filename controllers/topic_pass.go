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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

// maxPartitionStatuses caps status.partitionStatuses so that a topic with
// thousands of partitions keeps a small status; the counts cover them all.
const maxPartitionStatuses = 256

// topicBrokers are the broker calls a Topic pass makes; *brokerclient.Client
// has them, and the table tests give a fake.
type topicBrokers interface {
	CreateTopic(ctx context.Context, req api.CreateTopicRequest) (*api.CreateTopicResult, error)
	DescribeTopic(ctx context.Context, name string) (*api.TopicDescription, error)
	AddPartitions(ctx context.Context, name string, partitions int32) error
	SetTopicConfig(ctx context.Context, name string, config map[string]string) (map[string]string, error)
	SetReplicationFactor(ctx context.Context, name string, rf int16) error
	DeleteTopic(ctx context.Context, name string) error
}

// topicPass is a Topic's part of one pass: the shared pass (status, events,
// failures) and the brokers to ask.
type topicPass struct {
	*topicObjectPass
	topic *kairov1alpha1.Topic
	bc    topicBrokers
	// created: this pass created the topic, so it holds no records yet.
	created bool
}

func newTopicPass(p *topicObjectPass, bc topicBrokers) *topicPass {
	return &topicPass{topicObjectPass: p, topic: p.obj, bc: bc}
}

// ensure makes the topic match the spec: it creates or adopts it, converges
// partitions, config and replicas, and observes the result. It stops at the
// first phase that cannot go on and says why in the Ready condition.
func (p *topicPass) ensure(ctx context.Context) (ctrl.Result, error) {
	t := p.topic
	desc, action, stop := p.ensureExists(ctx)
	if stop != nil {
		return stop.res, stop.err
	}
	p.created = action == ReasonCreated
	if desc.TopicID != p.status.TopicID && action == "" {
		if stop := p.adopt(desc); stop != nil {
			return stop.res, stop.err
		}
		action = ReasonAdopted
	}
	if desc.TopicID != p.status.TopicID {
		p.status.PartitionStatuses = nil // another topic's offsets
	}
	p.status.TopicID = desc.TopicID

	if desc.PartitionCount > t.Spec.Partitions {
		p.observe(desc)
		p.status.ObservedGeneration = t.Generation
		p.setReady(metav1.ConditionFalse, ReasonNotSupported, corev1.EventTypeWarning, fmt.Sprintf(
			"Topic %q has %d partitions on the brokers and the spec asks for %d; partitions cannot be decreased",
			p.name, desc.PartitionCount, t.Spec.Partitions))
		return p.resyncLater()
	}
	changed, failure := p.converge(ctx, desc, action)
	if failure != nil {
		return p.failed(*failure)
	}
	if changed {
		var err error
		if desc, err = p.bc.DescribeTopic(ctx, p.name); err != nil {
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
		return p.pollSoon()
	}
	reason := action
	if reason == "" {
		reason = p.readyTrueReason()
		if p.readyReason() == ReasonReassigning {
			reason = ReasonUpdated // the replica change this resource started is done
		} else if reason == "" {
			reason = ReasonInSync
		}
	}
	p.setReady(metav1.ConditionTrue, reason, corev1.EventTypeNormal, p.summary(desc))
	return p.resyncLater()
}

// ensureExists returns the topic's description, creating the topic when
// this resource has not created or adopted it yet, or when it was deleted
// out of band and the spec asks for it back. action is Created or Recreated
// when it did. A non-nil passEnd ends the pass.
func (p *topicPass) ensureExists(ctx context.Context) (
	desc *api.TopicDescription, action string, stop *passEnd) {
	t := p.topic
	// Most new Topics name a topic that does not exist yet: create first and
	// describe after, one call fewer than asking first. A Topic that found
	// an incompatible topic last time asks first, so that it does not send
	// a doomed create every resync.
	if p.status.TopicID == "" && !p.refusedAdoption() {
		_, cerr := p.bc.CreateTopic(ctx, p.createRequest())
		switch {
		case cerr == nil:
			action = ReasonCreated
		case api.IsCode(cerr, api.CodeTopicAlreadyExists):
			// Adopted below if it fits the spec.
		default:
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name, cerr)))
		}
	}
	desc, derr := p.bc.DescribeTopic(ctx, p.name)
	if action == ReasonCreated {
		desc, derr = p.describeCreated(ctx, desc, derr)
	}
	if api.IsCode(derr, api.CodeUnknownTopic) && p.status.TopicID == "" && action == "" {
		// The incompatible topic is gone: create the spec's own.
		_, cerr := p.bc.CreateTopic(ctx, p.createRequest())
		switch {
		case cerr == nil:
			action = ReasonCreated
		case !api.IsCode(cerr, api.CodeTopicAlreadyExists):
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name, cerr)))
		}
		desc, derr = p.bc.DescribeTopic(ctx, p.name)
	}
	if api.IsCode(derr, api.CodeUnknownTopic) && p.status.TopicID != "" {
		if !t.Spec.RecreateIfDeleted {
			return nil, "", endWith(p.deletedOutOfBand())
		}
		if _, cerr := p.bc.CreateTopic(ctx, p.createRequest()); cerr != nil &&
			!api.IsCode(cerr, api.CodeTopicAlreadyExists) {
			return nil, "", endWith(p.failed(classify(p.cluster, "Create topic "+p.name+" again", cerr)))
		}
		action = ReasonRecreated
		p.event(corev1.EventTypeNormal, ReasonTopicRecreated, "Create",
			"Topic %q was deleted on the brokers out of band and was created again (spec.recreateIfDeleted)", p.name)
		desc, derr = p.bc.DescribeTopic(ctx, p.name)
	}
	if api.IsCode(derr, api.CodeUnknownTopic) {
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

// describeCreated asks again, within createdVisibleWait, for a topic this
// pass has just created that the broker answering the describe does not
// know yet: another broker took the create, and this one has not applied
// it from the metadata log. Giving up at once would make the next pass
// find the topic existing and report it adopted rather than created.
func (p *topicPass) describeCreated(ctx context.Context, desc *api.TopicDescription, derr error) (*api.TopicDescription, error) {
	waited := time.Duration(0)
	for wait := createdVisiblePoll; api.IsCode(derr, api.CodeUnknownTopic) && waited+wait <= createdVisibleWait; wait *= 2 {
		select {
		case <-ctx.Done():
			return desc, derr
		case <-time.After(wait):
		}
		waited += wait
		desc, derr = p.bc.DescribeTopic(ctx, p.name)
	}
	return desc, derr
}

// refusedAdoption reports whether the last pass found an incompatible topic.
func (p *topicPass) refusedAdoption() bool {
	return p.readyReason() == ReasonIncompatible
}

func (p *topicPass) createRequest() api.CreateTopicRequest {
	req := api.CreateTopicRequest{Name: p.name, Partitions: p.topic.Spec.Partitions, Config: p.topic.Spec.Config}
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
func (p *topicPass) adopt(desc *api.TopicDescription) *passEnd {
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
		forgetTopic(&p.status)
		p.status.ObservedGeneration = t.Generation
		p.setReady(metav1.ConditionFalse, ReasonIncompatible, corev1.EventTypeWarning, fmt.Sprintf(
			"Topic %q already exists on the brokers and was not adopted: %s", p.name, strings.Join(why, "; ")))
		return endWith(p.resyncLater())
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
func (p *topicPass) converge(ctx context.Context, desc *api.TopicDescription, action string) (bool, *brokerFailure) {
	t := p.topic
	log := logf.FromContext(ctx)
	changed := false
	if desc.PartitionCount < t.Spec.Partitions {
		if err := p.bc.AddPartitions(ctx, p.name, t.Spec.Partitions); err != nil {
			f := classify(p.cluster, "Increase partitions of topic "+p.name, err)
			return false, &f
		}
		log.Info("Increased topic partitions", "topic", p.name, "from", desc.PartitionCount, "to", t.Spec.Partitions)
		p.event(corev1.EventTypeNormal, ReasonPartitionsIncreased, "Update",
			"Increased partitions of topic %q from %d to %d", p.name, desc.PartitionCount, t.Spec.Partitions)
		changed = true
	}
	if !sameConfig(desc.Config, t.Spec.Config) {
		if _, err := p.bc.SetTopicConfig(ctx, p.name, t.Spec.Config); err != nil {
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
		if err := p.bc.SetReplicationFactor(ctx, p.name, int16(*t.Spec.Replicas)); err != nil {
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

func reassigning(desc *api.TopicDescription) bool {
	for _, pd := range desc.Partitions {
		if len(pd.Adding) > 0 || len(pd.Removing) > 0 {
			return true
		}
	}
	return false
}

// observe copies what the brokers report into the status. A partition
// whose offsets the brokers did not report (-1: its leader has not opened
// the replica of a topic created a moment ago, or did not answer in time)
// keeps the high watermark last observed, and starts at 0 in a topic this
// pass created: writing "unknown" would change the status now and again
// at the next resync, when the value is known and the same as before.
func (p *topicPass) observe(desc *api.TopicDescription) {
	st := &p.status
	lastHW := map[int32]int64{}
	for _, ps := range st.PartitionStatuses {
		lastHW[ps.Partition] = ps.HighWatermark
	}
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
			hw := pd.HighWatermark
			if last, seen := lastHW[pd.Partition]; hw < 0 && seen && last >= 0 {
				hw = last
			} else if hw < 0 && p.created {
				hw = 0
			}
			parts = append(parts, kairov1alpha1.PartitionStatus{Partition: pd.Partition, Leader: pd.Leader,
				Replicas: pd.Replicas, ISR: pd.ISR, HighWatermark: hw})
		}
	}
	slices.SortFunc(parts, func(a, b kairov1alpha1.PartitionStatus) int { return int(a.Partition - b.Partition) })
	st.PartitionStatuses = parts
}

// forgetTopic forgets what was observed of a topic this resource does not
// manage (a conflict, a refused adoption).
func forgetTopic(st *kairov1alpha1.TopicStatus) {
	st.TopicID, st.Partitions, st.Replicas = "", 0, 0
	st.UnderReplicatedPartitions, st.OfflinePartitions, st.PartitionStatuses = 0, 0, nil
}

// summary is the Ready message of a topic that matches its spec.
func (p *topicPass) summary(desc *api.TopicDescription) string {
	msg := fmt.Sprintf("Topic %q has %d partitions with %d replicas", p.name, desc.PartitionCount, desc.ReplicationFactor)
	if n := p.status.UnderReplicatedPartitions; n > 0 {
		msg += fmt.Sprintf("; %d under-replicated", n)
	}
	if n := p.status.OfflinePartitions; n > 0 {
		msg += fmt.Sprintf("; %d offline", n)
	}
	return msg
}

// deletedOutOfBand reports a managed topic that someone deleted on the
// brokers while spec.recreateIfDeleted is off. The topic id stays in status
// so that the next pass still knows the topic existed.
func (p *topicPass) deletedOutOfBand() (ctrl.Result, error) {
	id := p.status.TopicID
	forgetTopic(&p.status)
	p.status.TopicID = id
	p.status.ObservedGeneration = p.topic.Generation
	if p.setReadyQuietly(metav1.ConditionFalse, ReasonDeletedOutOfBand, fmt.Sprintf(
		"Topic %q was deleted on the brokers out of band; set spec.recreateIfDeleted to create it again", p.name)) {
		p.event(corev1.EventTypeWarning, ReasonTopicDeletedOutOfBand, "Observe",
			"Topic %q (id %s) was deleted on the brokers out of band; it is not recreated unless spec.recreateIfDeleted is set", p.name, id)
	}
	return p.resyncLater()
}

// delete deletes the topic on the brokers when it is the one this resource
// created or adopted (the same topic id), else leaves it there.
func (p *topicPass) delete(ctx context.Context) (ctrl.Result, error) {
	desc, err := p.bc.DescribeTopic(ctx, p.name)
	if api.IsCode(err, api.CodeUnknownTopic) {
		return p.release(ctx, corev1.EventTypeNormal, ReasonTopicDeleted, "Topic %q was already gone from the brokers", p.name)
	}
	if err != nil {
		return p.failed(classify(p.cluster, "Describe topic "+p.name+" before deleting it", err))
	}
	if desc.TopicID != p.status.TopicID {
		return p.release(ctx, corev1.EventTypeWarning, ReasonTopicNotOwned,
			"Topic %q on the brokers has id %s, not %s which this resource managed; it was left on the brokers", p.name, desc.TopicID, p.status.TopicID)
	}
	if err := p.bc.DeleteTopic(ctx, p.name); err != nil && !api.IsCode(err, api.CodeUnknownTopic) {
		return p.failed(classify(p.cluster, "Delete topic "+p.name, err))
	}
	logf.FromContext(ctx).Info("Deleted topic on the brokers", "topic", p.name)
	return p.release(ctx, corev1.EventTypeNormal, ReasonTopicDeleted, "Deleted topic %q on the brokers", p.name)
}
