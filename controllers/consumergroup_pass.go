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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

// Results of status.lastOffsetReset.
const (
	offsetResetApplied = "Applied"
	offsetResetFailed  = "Failed"
)

// groupBrokers are the broker calls a ConsumerGroup pass makes;
// *brokerclient.Client has them, and the table tests give a fake.
type groupBrokers interface {
	DescribeGroup(ctx context.Context, group string, topics ...string) (*api.GroupDescription, error)
	SetGroupConfig(ctx context.Context, cfg api.GroupConfig) (*api.GroupConfig, error)
	ResetOffsets(ctx context.Context, req api.ResetOffsetsRequest) ([]api.PartitionOffset, error)
	DeleteGroup(ctx context.Context, group string) error
}

// groupPass is a ConsumerGroup's part of one pass: the shared pass (status,
// events, failures) and the brokers to ask.
type groupPass struct {
	*groupObjectPass
	group *kairov1alpha1.ConsumerGroup
	bc    groupBrokers
}

func newGroupPass(p *groupObjectPass, bc groupBrokers) *groupPass {
	return &groupPass{groupObjectPass: p, group: p.obj, bc: bc}
}

// ensure observes the group, sets its config to the spec, applies a
// pending offset reset when the group is empty, and records what it saw.
func (p *groupPass) ensure(ctx context.Context) (ctrl.Result, error) {
	g := p.group
	desc, missingTopic, end := p.describe(ctx)
	if end != nil {
		return end.res, end.err
	}
	configured, end := p.configure(ctx, desc)
	if end != nil {
		return end.res, end.err
	}
	resetWaiting, resetDone, end := p.offsetReset(ctx, desc)
	if end != nil {
		return end.res, end.err
	}
	if configured || resetDone || desc == nil {
		if desc, missingTopic, end = p.describe(ctx); end != nil {
			return end.res, end.err
		}
		if desc == nil {
			return ctrl.Result{}, errBrokerRetry{msg: fmt.Sprintf("group %q not visible yet after setting its config", p.name)}
		}
	}
	p.observe(desc)
	p.status.ObservedGeneration = g.Generation

	switch {
	case missingTopic != "":
		p.setReady(metav1.ConditionFalse, ReasonTopicNotFound, corev1.EventTypeWarning, missingTopic)
	case resetWaiting:
		// resetWaits sent the event, a Normal one: waiting is expected.
		p.setReady(metav1.ConditionFalse, ReasonOffsetResetPending, "", p.resetWaitMessage(len(desc.Members)))
		return p.pollSoon()
	default:
		reason := p.readyTrueReason()
		if configured {
			reason = ReasonConfigured
		} else if reason == "" {
			reason = ReasonObserved
		}
		p.setReady(metav1.ConditionTrue, reason, "", fmt.Sprintf("Group %q is %s with %d members", p.name, desc.State, len(desc.Members)))
	}
	return p.resyncLater()
}

// describe reads the group with every partition of spec.topics. A group the
// brokers do not know yet gives a nil description. When a topic of
// spec.topics does not exist the group is described without them and
// missingTopic says which.
func (p *groupPass) describe(ctx context.Context) (
	desc *api.GroupDescription, missingTopic string, end *passEnd) {
	desc, err := p.bc.DescribeGroup(ctx, p.name, p.group.Spec.Topics...)
	if api.IsCode(err, api.CodeUnknownTopic) {
		missingTopic = brokerMessage(err)
		desc, err = p.bc.DescribeGroup(ctx, p.name)
	}
	if api.IsCode(err, api.CodeUnknownGroup) {
		return nil, missingTopic, nil
	}
	if err != nil {
		return nil, "", endWith(p.failed(classify(p.cluster, "Describe group "+p.name, err)))
	}
	return desc, missingTopic, nil
}

// desiredConfig is the group config the spec asks for. A zero session
// timeout leaves the broker's default in place.
func (p *groupPass) desiredConfig() api.GroupConfig {
	cfg := api.GroupConfig{Group: p.name, AssignmentStrategy: string(p.group.Spec.AssignmentStrategy)}
	if cfg.AssignmentStrategy == "" {
		cfg.AssignmentStrategy = string(kairov1alpha1.AssignmentRange)
	}
	if st := p.group.Spec.SessionTimeout; st != nil {
		cfg.SessionTimeoutMs = st.Milliseconds()
	}
	return cfg
}

// configure sets the group's session timeout and assignment strategy when
// the spec changed since the last good pass, when the group is unknown to
// the brokers, or when the brokers report other values (drift).
func (p *groupPass) configure(ctx context.Context, desc *api.GroupDescription) (bool, *passEnd) {
	g := p.group
	want := p.desiredConfig()
	specChanged := g.Generation != g.Status.ObservedGeneration
	drift := desc != nil && (desc.AssignmentStrategy != want.AssignmentStrategy ||
		(want.SessionTimeoutMs > 0 && desc.SessionTimeoutMs != want.SessionTimeoutMs))
	if !specChanged && !drift && desc != nil {
		return false, nil
	}
	if _, err := p.bc.SetGroupConfig(ctx, want); err != nil {
		return false, endWith(p.failed(classify(p.cluster, "Set config of group "+p.name, err)))
	}
	log := logf.FromContext(ctx)
	if drift && !specChanged {
		log.Info("Reverted group config changed out of band", "group", p.name,
			"sessionTimeoutMs", desc.SessionTimeoutMs, "assignmentStrategy", desc.AssignmentStrategy)
		p.event(corev1.EventTypeWarning, ReasonGroupConfigDriftReverted, "Update",
			"Config of group %q was changed on the brokers out of band (session timeout %dms, strategy %s); set back to the spec",
			p.name, desc.SessionTimeoutMs, desc.AssignmentStrategy)
	} else {
		log.Info("Set group config", "group", p.name, "sessionTimeoutMs", want.SessionTimeoutMs, "assignmentStrategy", want.AssignmentStrategy)
		p.event(corev1.EventTypeNormal, ReasonGroupConfigured, "Update",
			"Set group %q to assignment strategy %s and %s", p.name, want.AssignmentStrategy, sessionTimeoutText(want.SessionTimeoutMs))
	}
	return true, nil
}

func sessionTimeoutText(ms int64) string {
	if ms == 0 {
		return "the brokers' default session timeout"
	}
	return "session timeout " + (time.Duration(ms) * time.Millisecond).String()
}

// offsetReset applies spec.offsetReset once per request id. While the group
// has active members it waits (a running consumer would overwrite the reset
// at its next commit); the broker refuses a reset of a non-empty group
// atomically, so a member joining in between is also caught. A transient
// failure is retried; any other failure is recorded and not retried.
func (p *groupPass) offsetReset(ctx context.Context, desc *api.GroupDescription) (
	waiting, applied bool, end *passEnd) {
	req := p.group.Spec.OffsetReset
	if req == nil || (p.status.LastOffsetReset != nil && p.status.LastOffsetReset.RequestID == req.RequestID) {
		return false, false, nil
	}
	if desc != nil && len(desc.Members) > 0 {
		return p.resetWaits(len(desc.Members)), false, nil
	}
	topics := req.Topics
	if len(topics) == 0 {
		topics = p.group.Spec.Topics
	}
	breq := api.ResetOffsetsRequest{Group: p.name, To: string(req.To), Offset: req.Offset, Topics: topics}
	if req.Timestamp != nil {
		ms := req.Timestamp.UnixMilli()
		breq.Timestamp = &ms
	}
	offsets, err := p.bc.ResetOffsets(ctx, breq)
	if api.IsCode(err, api.CodeNonEmptyGroup) {
		return p.resetWaits(-1), false, nil
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	if err != nil {
		f := classify(p.cluster, "Reset offsets of group "+p.name, err)
		if f.transient {
			return false, false, endWith(p.failed(f))
		}
		p.status.LastOffsetReset = &kairov1alpha1.OffsetResetStatus{RequestID: req.RequestID, Result: offsetResetFailed,
			Message: f.message, Time: &now}
		p.event(corev1.EventTypeWarning, ReasonOffsetResetFailed, "ResetOffsets", "Offset reset %q failed: %s", req.RequestID, f.message)
		return false, false, nil
	}
	msg := resetSummary(req, offsets)
	p.status.LastOffsetReset = &kairov1alpha1.OffsetResetStatus{RequestID: req.RequestID, Result: offsetResetApplied,
		Message: msg, Time: &now}
	logf.FromContext(ctx).Info("Applied offset reset", "group", p.name, "requestId", req.RequestID, "to", req.To, "partitions", len(offsets))
	p.event(corev1.EventTypeNormal, ReasonOffsetResetApplied, "ResetOffsets", "Offset reset %q applied: %s", req.RequestID, msg)
	return false, true, nil
}

// resetWaits notes that the pending reset waits for an empty group, with an
// event when it starts waiting; members is -1 when the broker refused the
// reset because someone joined in between.
func (p *groupPass) resetWaits(members int) bool {
	if p.readyReason() != ReasonOffsetResetPending {
		p.event(corev1.EventTypeNormal, ReasonOffsetResetPending, "ResetOffsets", "%s", p.resetWaitMessage(members))
	}
	return true
}

func (p *groupPass) resetWaitMessage(members int) string {
	id := p.group.Spec.OffsetReset.RequestID
	if members > 0 {
		return fmt.Sprintf("Offset reset %q waits for the group's %d active members to leave", id, members)
	}
	return fmt.Sprintf("Offset reset %q waits for the group to have no active members", id)
}

// resetSummary says what a reset moved: "moved 3 partitions of orders to earliest".
func resetSummary(req *kairov1alpha1.OffsetReset, offs []api.PartitionOffset) string {
	var topics []string
	for _, o := range offs {
		if !slices.Contains(topics, o.Topic) {
			topics = append(topics, o.Topic)
		}
	}
	target := string(req.To)
	switch {
	case req.To == kairov1alpha1.ResetToOffset && req.Offset != nil:
		target = fmt.Sprintf("offset %d (clamped to each partition's range)", *req.Offset)
	case req.To == kairov1alpha1.ResetToTimestamp && req.Timestamp != nil:
		target = "the first record at or after " + req.Timestamp.UTC().Format(time.RFC3339)
	}
	if len(offs) == 0 {
		return "no partitions to move"
	}
	return fmt.Sprintf("moved %d partitions of %s to %s", len(offs), strings.Join(topics, ", "), target)
}

// observe copies the group's description into the status. Times are kept
// to the second, as the API server stores them, so that an unchanged group
// compares equal and is not written again.
func (p *groupPass) observe(desc *api.GroupDescription) {
	st := &p.status
	st.State = desc.State
	st.Generation = desc.Generation
	st.MemberCount = int32(len(desc.Members))
	st.Members = nil
	for _, m := range desc.Members {
		ms := kairov1alpha1.GroupMemberStatus{ID: m.ID, ClientID: m.ClientID}
		if !m.LastSeen.IsZero() {
			t := metav1.NewTime(m.LastSeen.Truncate(time.Second))
			ms.LastSeen = &t
		}
		for _, a := range m.Assignment {
			if len(a.Partitions) > 0 {
				ms.Assignment = append(ms.Assignment, kairov1alpha1.TopicPartitions{Topic: a.Topic, Partitions: a.Partitions})
			}
		}
		st.Members = append(st.Members, ms)
	}
	st.Offsets, st.TotalLag = nil, 0
	for _, o := range desc.Offsets {
		if len(p.group.Spec.Topics) > 0 && !slices.Contains(p.group.Spec.Topics, o.Topic) {
			continue
		}
		st.Offsets = append(st.Offsets, kairov1alpha1.PartitionOffsetStatus{Topic: o.Topic, Partition: o.Partition,
			CommittedOffset: o.CommittedOffset, HighWatermark: o.HighWatermark, Lag: o.Lag})
		if o.Lag > 0 {
			st.TotalLag += o.Lag
		}
	}
}

// forgetGroup forgets what was observed of a group this resource does not manage.
func forgetGroup(st *kairov1alpha1.ConsumerGroupStatus) {
	st.State, st.Generation, st.MemberCount, st.Members = "", 0, 0, nil
	st.Offsets, st.TotalLag = nil, 0
}

// delete deletes the group's committed offsets on the brokers, waiting
// (with a condition) while the group has active members, since the brokers
// refuse to delete a group in use.
func (p *groupPass) delete(ctx context.Context) (ctrl.Result, error) {
	err := p.bc.DeleteGroup(ctx, p.name)
	switch {
	case err == nil:
		logf.FromContext(ctx).Info("Deleted group offsets on the brokers", "group", p.name)
		return p.release(ctx, corev1.EventTypeNormal, ReasonGroupDeleted, "Deleted the committed offsets of group %q on the brokers", p.name)
	case api.IsCode(err, api.CodeUnknownGroup):
		return p.release(ctx, corev1.EventTypeNormal, ReasonGroupDeleted, "Group %q was already gone from the brokers", p.name)
	case api.IsCode(err, api.CodeNonEmptyGroup):
		p.setReady(metav1.ConditionFalse, ReasonGroupNotEmpty, corev1.EventTypeWarning, fmt.Sprintf(
			"Waiting for the members of group %q to leave before deleting its committed offsets: %s", p.name, brokerMessage(err)))
		return p.pollSoon()
	}
	return p.failed(classify(p.cluster, "Delete group "+p.name, err))
}
