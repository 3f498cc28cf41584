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
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

func TestGroupPassDecisions(t *testing.T) {
	const name = "readers"
	spec := func(change func(*kairov1alpha1.ConsumerGroupSpec)) kairov1alpha1.ConsumerGroupSpec {
		s := kairov1alpha1.ConsumerGroupSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: "kairo"}, Topics: []string{"orders"}}
		if change != nil {
			change(&s)
		}
		return s
	}
	// brokers hold the topic orders with two partitions, and the group
	// when one is given.
	brokers := func(group *api.GroupDescription) *fakeBrokers {
		f := newFakeBrokers().withTopic("orders", "id-1", 2, 1, nil)
		if group != nil {
			f.withGroup(*group)
		}
		return f
	}
	empty := &api.GroupDescription{Group: name, State: "Empty", AssignmentStrategy: "range", SessionTimeoutMs: 30000}
	busy := &api.GroupDescription{Group: name, State: "Stable", Generation: 4, AssignmentStrategy: "range",
		SessionTimeoutMs: 30000, Members: []api.GroupMember{{ID: "m-1", ClientID: "app"}}}
	// observedInSync is a last pass that observed the group at this generation.
	observedInSync := lastPass{ready: metav1.ConditionTrue, reason: ReasonObserved, observed: 2}
	describeOnly := []string{"DescribeGroup readers"}
	resetToEarliest := func(s *kairov1alpha1.ConsumerGroupSpec) {
		s.OffsetReset = &kairov1alpha1.OffsetReset{RequestID: "r1", To: kairov1alpha1.ResetToEarliest}
	}
	failing := func(f *fakeBrokers, call string, err error) *fakeBrokers {
		f.fail[call] = err
		return f
	}

	for _, tc := range []struct {
		name      string
		spec      kairov1alpha1.ConsumerGroupSpec
		last      lastPass
		lastReset string // status.lastOffsetReset.requestId from the last pass
		brokers   *fakeBrokers
		calls     []string
		want      passOutcome
		// reset is status.lastOffsetReset as "Applied: <message>", or "".
		reset string
	}{
		{
			name:    "a group the brokers do not know yet is configured, then observed",
			spec:    spec(nil),
			brokers: brokers(nil),
			calls:   []string{"DescribeGroup readers", "SetGroupConfig readers", "DescribeGroup readers"},
			want: passOutcome{ready: "True Configured", message: `Group "readers" is Empty with 0 members`,
				events: []string{`Normal GroupConfigured Set group "readers" to assignment strategy range and the brokers' default session timeout`},
				next:   "resync"},
		},
		{
			name:    "a group in line with the spec costs one describe and keeps its reason",
			spec:    spec(nil),
			last:    observedInSync,
			brokers: brokers(busy),
			calls:   describeOnly,
			want:    passOutcome{ready: "True Observed", message: `Group "readers" is Stable with 1 members`, next: "resync"},
		},
		{
			name: "a spec change sets the session timeout and strategy",
			spec: spec(func(s *kairov1alpha1.ConsumerGroupSpec) {
				s.SessionTimeout = &metav1.Duration{Duration: 2 * time.Second}
				s.AssignmentStrategy = kairov1alpha1.AssignmentRoundRobin
			}),
			last:    lastPass{ready: metav1.ConditionTrue, reason: ReasonObserved, observed: 1},
			brokers: brokers(empty),
			calls:   []string{"DescribeGroup readers", "SetGroupConfig readers", "DescribeGroup readers"},
			want: passOutcome{ready: "True Configured",
				events: []string{`Normal GroupConfigured Set group "readers" to assignment strategy roundrobin and session timeout 2s`},
				next:   "resync"},
		},
		{
			name:    "config changed on the brokers out of band is set back, with a warning",
			spec:    spec(nil),
			last:    observedInSync,
			brokers: brokers(&api.GroupDescription{Group: name, State: "Empty", AssignmentStrategy: "roundrobin", SessionTimeoutMs: 60000}),
			calls:   []string{"DescribeGroup readers", "SetGroupConfig readers", "DescribeGroup readers"},
			want: passOutcome{ready: "True Configured", events: []string{
				`Warning GroupConfigDriftReverted Config of group "readers" was changed on the brokers out of band ` +
					`(session timeout 60000ms, strategy roundrobin); set back to the spec`,
			}, next: "resync"},
		},
		{
			name:    "a topic of spec.topics that does not exist",
			spec:    spec(func(s *kairov1alpha1.ConsumerGroupSpec) { s.Topics = []string{"orders", "gone"} }),
			last:    observedInSync,
			brokers: brokers(empty),
			calls:   []string{"DescribeGroup readers", "DescribeGroup readers"},
			want: passOutcome{ready: "False TopicNotFound", message: `topic "gone" does not exist`,
				events: []string{`Warning TopicNotFound topic "gone" does not exist`}, next: "resync"},
		},
		{
			name:    "an offset reset waits while the group has members, with a Normal event",
			spec:    spec(resetToEarliest),
			last:    observedInSync,
			brokers: brokers(busy),
			calls:   describeOnly,
			want: passOutcome{ready: "False OffsetResetPending", message: `Offset reset "r1" waits for the group's 1 active members to leave`,
				events: []string{`Normal OffsetResetPending Offset reset "r1" waits for the group's 1 active members to leave`},
				next:   "poll"},
		},
		{
			name:    "an offset reset waits without a second event",
			spec:    spec(resetToEarliest),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonOffsetResetPending, observed: 2},
			brokers: brokers(busy),
			calls:   describeOnly,
			want:    passOutcome{ready: "False OffsetResetPending", next: "poll"},
		},
		{
			name:    "an offset reset is applied once the group is empty",
			spec:    spec(resetToEarliest),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonOffsetResetPending, observed: 2},
			brokers: brokers(empty),
			calls:   []string{"DescribeGroup readers", "ResetOffsets readers", "DescribeGroup readers"},
			want: passOutcome{ready: "True Observed",
				events: []string{`Normal OffsetResetApplied Offset reset "r1" applied: moved 2 partitions of orders to earliest`},
				next:   "resync"},
			reset: "Applied: moved 2 partitions of orders to earliest",
		},
		{
			name:      "an applied request is not applied again",
			spec:      spec(resetToEarliest),
			last:      lastPass{ready: metav1.ConditionTrue, reason: ReasonObserved, observed: 2},
			lastReset: "r1",
			brokers:   brokers(empty),
			calls:     describeOnly,
			want:      passOutcome{ready: "True Observed", next: "resync"},
		},
		{
			name: "a member joining before the reset makes it wait",
			spec: spec(resetToEarliest),
			last: observedInSync,
			brokers: failing(brokers(empty), "ResetOffsets",
				api.Errorf(api.CodeNonEmptyGroup, "group %q has active members", name)),
			calls: []string{"DescribeGroup readers", "ResetOffsets readers"},
			want: passOutcome{ready: "False OffsetResetPending", message: `Offset reset "r1" waits for the group to have no active members`,
				events: []string{`Normal OffsetResetPending Offset reset "r1" waits for the group to have no active members`},
				next:   "poll"},
		},
		{
			name: "a reset the brokers refuse is recorded as Failed and not retried",
			spec: spec(resetToEarliest),
			last: observedInSync,
			brokers: failing(brokers(empty), "ResetOffsets",
				api.Errorf(api.CodeInvalidArgument, "offset required")),
			calls: []string{"DescribeGroup readers", "ResetOffsets readers"},
			want: passOutcome{ready: "True Observed", events: []string{
				`Warning OffsetResetFailed Offset reset "r1" failed: Reset offsets of group readers: 400 INVALID_ARGUMENT: offset required`,
			}, next: "resync"},
			reset: "Failed: Reset offsets of group readers: 400 INVALID_ARGUMENT: offset required",
		},
		{
			name: "a reset that fails for now is retried",
			spec: spec(resetToEarliest),
			last: observedInSync,
			brokers: failing(brokers(empty), "ResetOffsets",
				api.Errorf(api.CodeCoordinatorNotAvailable, "coordinator moving")),
			calls: []string{"DescribeGroup readers", "ResetOffsets readers"},
			want: passOutcome{ready: "False BrokerError", events: []string{
				`Warning BrokerError Reset offsets of group readers: 503 COORDINATOR_NOT_AVAILABLE: coordinator moving`,
			}, next: "retry"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &kairov1alpha1.ConsumerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 2}, Spec: tc.spec}
			g.Status = kairov1alpha1.ConsumerGroupStatus{ObservedGeneration: tc.last.observed, Conditions: tc.last.conditions()}
			if tc.lastReset != "" {
				g.Status.LastOffsetReset = &kairov1alpha1.OffsetResetStatus{RequestID: tc.lastReset, Result: offsetResetApplied}
			}
			rec := events.NewFakeRecorder(10)
			p := &groupObjectPass{kind: groupKind{}, recorder: rec, resync: testResyncInterval, obj: g,
				cluster: decisionCluster(), name: name, status: *g.Status.DeepCopy()}

			res, err := newGroupPass(p, tc.brokers).ensure(context.Background())

			outcome(p.status.Conditions, rec, res, err).check(t, tc.want)
			if !slices.Equal(tc.brokers.calls, tc.calls) {
				t.Errorf("broker calls = %q, want %q", tc.brokers.calls, tc.calls)
			}
			reset := ""
			if r := p.status.LastOffsetReset; r != nil && r.RequestID != tc.lastReset {
				reset = r.Result + ": " + r.Message
			}
			if reset != tc.reset {
				t.Errorf("status.lastOffsetReset = %q, want %q", reset, tc.reset)
			}
		})
	}
}

// TestGroupDeleteDecisions: deleting a group's offsets waits for its members.
func TestGroupDeleteDecisions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		brokers  *fakeBrokers
		want     passOutcome
		released bool
	}{
		{"deletes the offsets of an empty group",
			newFakeBrokers().withGroup(api.GroupDescription{Group: "readers", State: "Empty"}),
			passOutcome{events: []string{`Normal GroupDeleted Deleted the committed offsets of group "readers" on the brokers`}}, true},
		{"waits while the group has members",
			newFakeBrokers().withGroup(api.GroupDescription{Group: "readers", State: "Stable",
				Members: []api.GroupMember{{ID: "m-1"}}}),
			passOutcome{ready: "False GroupNotEmpty", events: []string{`Warning GroupNotEmpty Waiting for the members of group "readers" ` +
				`to leave before deleting its committed offsets: group "readers" has 1 active members`}, next: "poll"}, false},
		{"is done when the group is already gone", newFakeBrokers(),
			passOutcome{events: []string{`Normal GroupDeleted Group "readers" was already gone from the brokers`}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No finalizer on the object: release has nothing to patch.
			g := &kairov1alpha1.ConsumerGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "readers"}}
			rec := events.NewFakeRecorder(10)
			p := &groupObjectPass{kind: groupKind{}, recorder: rec, resync: testResyncInterval, obj: g,
				cluster: decisionCluster(), name: "readers"}
			res, err := newGroupPass(p, tc.brokers).delete(context.Background())
			outcome(p.status.Conditions, rec, res, err).check(t, tc.want)
			if p.released != tc.released {
				t.Errorf("released = %v, want %v", p.released, tc.released)
			}
		})
	}
}
