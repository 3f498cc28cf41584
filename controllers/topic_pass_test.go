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
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

func TestTopicPassDecisions(t *testing.T) {
	const name = "orders"
	poll, wait := createdVisiblePoll, createdVisibleWait
	createdVisiblePoll, createdVisibleWait = time.Millisecond, 31*time.Millisecond
	t.Cleanup(func() { createdVisiblePoll, createdVisibleWait = poll, wait })
	spec := func(change func(*kairov1alpha1.TopicSpec)) kairov1alpha1.TopicSpec {
		s := kairov1alpha1.TopicSpec{ClusterRef: kairov1alpha1.ClusterReference{Name: "kairo"}, Partitions: 3,
			Config: map[string]string{"retention.ms": "3600000"}}
		if change != nil {
			change(&s)
		}
		return s
	}
	inSync := map[string]string{"retention.ms": "3600000"}
	// createdAndInSync is a last pass that created the topic at this generation.
	createdAndInSync := lastPass{ready: metav1.ConditionTrue, reason: ReasonCreated, observed: 2}
	describeOnly := []string{"DescribeTopic orders"}
	unreachable := errors.New("dial tcp 10.0.0.1:8080: connect: connection refused")

	for _, tc := range []struct {
		name    string
		spec    kairov1alpha1.TopicSpec
		last    lastPass
		id      string // status.topicId from the last pass
		brokers *fakeBrokers
		calls   []string
		want    passOutcome
		wantID  string
	}{
		{
			name:    "creates a topic that does not exist, asking the brokers twice",
			spec:    spec(nil),
			brokers: newFakeBrokers(),
			calls:   []string{"CreateTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Created", message: `Topic "orders" has 3 partitions with 1 replicas`,
				events: []string{`Normal TopicCreated Created topic "orders" with 3 partitions and 1 replicas (id id-1)`},
				next:   "resync"},
			wantID: "id-1",
		},
		{
			name:    "adopts an existing topic that fits, raising its partitions and setting its config",
			spec:    spec(nil),
			brokers: newFakeBrokers().withTopic(name, "legacy", 2, 1, map[string]string{"retention.ms": "5000"}),
			calls: []string{"CreateTopic orders", "DescribeTopic orders", "AddPartitions orders",
				"SetTopicConfig orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Adopted", events: []string{
				`Normal TopicAdopted Adopted existing topic "orders" with 2 partitions and 1 replicas (id legacy)`,
				`Normal PartitionsIncreased Increased partitions of topic "orders" from 2 to 3`,
				`Normal ConfigUpdated Set config of topic "orders" to {retention.ms=3600000}`,
			}, next: "resync"},
			wantID: "legacy",
		},
		{
			name:    "does not adopt a topic with more partitions",
			spec:    spec(nil),
			brokers: newFakeBrokers().withTopic(name, "big", 4, 1, nil),
			calls:   []string{"CreateTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "False Incompatible",
				message: `Topic "orders" already exists on the brokers and was not adopted: it has 4 partitions and the spec asks for 3 (partitions cannot be decreased)`,
				events: []string{`Warning Incompatible Topic "orders" already exists on the brokers and was not adopted: ` +
					`it has 4 partitions and the spec asks for 3 (partitions cannot be decreased)`},
				next: "resync"},
		},
		{
			name:    "does not adopt a topic with other replicas",
			spec:    spec(func(s *kairov1alpha1.TopicSpec) { s.Replicas = ptr.To(int32(3)) }),
			brokers: newFakeBrokers().withTopic(name, "narrow", 3, 1, inSync),
			calls:   []string{"CreateTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "False Incompatible",
				message: `Topic "orders" already exists on the brokers and was not adopted: it has 1 replicas and the spec asks for 3`,
				events: []string{`Warning Incompatible Topic "orders" already exists on the brokers and was not adopted: ` +
					`it has 1 replicas and the spec asks for 3`},
				next: "resync"},
		},
		{
			name:    "asks first, without a doomed create, after refusing to adopt",
			spec:    spec(nil),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonIncompatible, observed: 2},
			brokers: newFakeBrokers().withTopic(name, "big", 4, 1, nil),
			calls:   describeOnly,
			want:    passOutcome{ready: "False Incompatible", next: "resync"},
		},
		{
			name:    "creates its own topic once the incompatible one is gone",
			spec:    spec(nil),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonIncompatible, observed: 2},
			brokers: newFakeBrokers(),
			calls:   []string{"DescribeTopic orders", "CreateTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Created",
				events: []string{`Normal TopicCreated Created topic "orders" with 3 partitions and 1 replicas (id id-1)`},
				next:   "resync"},
			wantID: "id-1",
		},
		{
			name:    "a topic in sync costs one describe and keeps its reason",
			spec:    spec(nil),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 3, 1, inSync),
			calls:   describeOnly,
			want:    passOutcome{ready: "True Created", next: "resync"},
			wantID:  "id-7",
		},
		{
			name:    "numbers in the config compare as numbers",
			spec:    spec(func(s *kairov1alpha1.TopicSpec) { s.Config = map[string]string{"retention.ms": "03600000"} }),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 3, 1, inSync),
			calls:   describeOnly,
			want:    passOutcome{ready: "True Created", next: "resync"},
			wantID:  "id-7",
		},
		{
			name:    "config changed on the brokers out of band is set back, with a warning",
			spec:    spec(nil),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 3, 1, map[string]string{"retention.ms": "1", "max.message.bytes": "10"}),
			calls:   []string{"DescribeTopic orders", "SetTopicConfig orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Updated", events: []string{
				`Warning ConfigDriftReverted Config of topic "orders" was changed on the brokers out of band ` +
					`({max.message.bytes=10, retention.ms=1}); set back to the spec`,
			}, next: "resync"},
			wantID: "id-7",
		},
		{
			name:    "a config change in the spec is applied without a warning",
			spec:    spec(nil),
			last:    lastPass{ready: metav1.ConditionTrue, reason: ReasonCreated, observed: 1},
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 3, 1, nil),
			calls:   []string{"DescribeTopic orders", "SetTopicConfig orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Updated",
				events: []string{`Normal ConfigUpdated Set config of topic "orders" to {retention.ms=3600000}`},
				next:   "resync"},
			wantID: "id-7",
		},
		{
			name:    "more partitions on the brokers than the spec is NotSupported",
			spec:    spec(nil),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 5, 1, inSync),
			calls:   describeOnly,
			want: passOutcome{ready: "False NotSupported",
				message: `Topic "orders" has 5 partitions on the brokers and the spec asks for 3; partitions cannot be decreased`,
				events: []string{`Warning NotSupported Topic "orders" has 5 partitions on the brokers and the spec asks for 3; ` +
					`partitions cannot be decreased`},
				next: "resync"},
			wantID: "id-7",
		},
		{
			name:    "a topic deleted out of band is reported and not recreated",
			spec:    spec(nil),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers(),
			calls:   describeOnly,
			want: passOutcome{ready: "False DeletedOutOfBand",
				message: `Topic "orders" was deleted on the brokers out of band; set spec.recreateIfDeleted to create it again`,
				events: []string{`Warning TopicDeletedOutOfBand Topic "orders" (id id-7) was deleted on the brokers out of band; ` +
					`it is not recreated unless spec.recreateIfDeleted is set`},
				next: "resync"},
			wantID: "id-7",
		},
		{
			name:    "a topic deleted out of band is recreated when the spec says so",
			spec:    spec(func(s *kairov1alpha1.TopicSpec) { s.RecreateIfDeleted = true }),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonDeletedOutOfBand, observed: 2},
			id:      "id-7",
			brokers: newFakeBrokers(),
			calls:   []string{"DescribeTopic orders", "CreateTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Recreated", events: []string{
				`Normal TopicRecreated Topic "orders" was deleted on the brokers out of band and was created again (spec.recreateIfDeleted)`,
			}, next: "resync"},
			wantID: "id-1",
		},
		{
			name:    "a topic deleted and created again out of band is adopted, with a warning",
			spec:    spec(nil),
			last:    createdAndInSync,
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-9", 3, 1, inSync),
			calls:   describeOnly,
			want: passOutcome{ready: "True Adopted", events: []string{
				`Warning TopicReplacedOutOfBand Topic "orders" was deleted and created again on the brokers out of band (id id-9, was id-7); adopting it`,
			}, next: "resync"},
			wantID: "id-9",
		},
		{
			name: "a replica change moves replicas and looks again soon",
			spec: spec(func(s *kairov1alpha1.TopicSpec) { s.Replicas = ptr.To(int32(3)) }),
			last: lastPass{ready: metav1.ConditionTrue, reason: ReasonCreated, observed: 1},
			id:   "id-7",
			brokers: func() *fakeBrokers {
				f := newFakeBrokers().withTopic(name, "id-7", 3, 1, inSync)
				f.reassign = true
				return f
			}(),
			calls: []string{"DescribeTopic orders", "SetReplicationFactor orders", "DescribeTopic orders"},
			want: passOutcome{ready: "False Reassigning", message: `Topic "orders" is moving its replicas to 3 per partition`,
				events: []string{
					`Normal ReplicasChanging Moving topic "orders" from 1 to 3 replicas per partition`,
					`Normal Reassigning Topic "orders" is moving its replicas to 3 per partition`,
				}, next: "poll"},
			wantID: "id-7",
		},
		{
			name:    "the replica change this resource started is Updated once it settles",
			spec:    spec(func(s *kairov1alpha1.TopicSpec) { s.Replicas = ptr.To(int32(3)) }),
			last:    lastPass{ready: metav1.ConditionFalse, reason: ReasonReassigning, observed: 2},
			id:      "id-7",
			brokers: newFakeBrokers().withTopic(name, "id-7", 3, 3, inSync),
			calls:   describeOnly,
			want:    passOutcome{ready: "True Updated", message: `Topic "orders" has 3 partitions with 3 replicas`, next: "resync"},
			wantID:  "id-7",
		},
		{
			name: "unreachable brokers are ClusterNotReady and retried with backoff",
			spec: spec(nil),
			brokers: func() *fakeBrokers {
				f := newFakeBrokers()
				f.fail["CreateTopic"] = unreachable
				return f
			}(),
			calls: []string{"CreateTopic orders"},
			want: passOutcome{ready: "False ClusterNotReady",
				message: `Brokers of KairoCluster "kairo" unreachable at http://10.0.0.1:8080: Create topic orders: ` + unreachable.Error(),
				events: []string{`Warning ClusterNotReady Brokers of KairoCluster "kairo" unreachable at http://10.0.0.1:8080: ` +
					`Create topic orders: ` + unreachable.Error()},
				next: "retry"},
		},
		{
			name: "a change the brokers refuse is BrokerError, not retried before the resync",
			spec: spec(func(s *kairov1alpha1.TopicSpec) { s.Replicas = ptr.To(int32(5)) }),
			last: lastPass{ready: metav1.ConditionTrue, reason: ReasonCreated, observed: 1},
			id:   "id-7",
			brokers: func() *fakeBrokers {
				f := newFakeBrokers().withTopic(name, "id-7", 3, 1, inSync)
				f.fail["SetReplicationFactor"] = api.Errorf(api.CodeInvalidReplicationFactor,
					"replication factor 5 exceeds the 3 live brokers")
				return f
			}(),
			calls: []string{"DescribeTopic orders", "SetReplicationFactor orders"},
			want: passOutcome{ready: "False BrokerError",
				message: "Change replicas of topic orders: 400 INVALID_REPLICATION_FACTOR: replication factor 5 exceeds the 3 live brokers",
				events: []string{"Warning BrokerError Change replicas of topic orders: 400 INVALID_REPLICATION_FACTOR: " +
					"replication factor 5 exceeds the 3 live brokers"},
				next: "resync"},
			wantID: "id-7",
		},
		{
			name: "a topic created through one broker and not visible yet on the next is described again, and is Created",
			spec: spec(nil),
			brokers: func() *fakeBrokers {
				f := newFakeBrokers()
				f.fail["DescribeTopic"] = api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", name)
				f.failTimes["DescribeTopic"] = 2
				return f
			}(),
			calls: []string{"CreateTopic orders", "DescribeTopic orders", "DescribeTopic orders", "DescribeTopic orders"},
			want: passOutcome{ready: "True Created", message: `Topic "orders" has 3 partitions with 1 replicas`,
				events: []string{`Normal TopicCreated Created topic "orders" with 3 partitions and 1 replicas (id id-1)`},
				next:   "resync"},
			wantID: "id-1",
		},
		{
			name: "a topic not visible yet after its creation is looked at again",
			spec: spec(nil),
			brokers: func() *fakeBrokers {
				f := newFakeBrokers()
				f.fail["DescribeTopic"] = api.Errorf(api.CodeUnknownTopic, "topic %q does not exist", name)
				return f
			}(),
			// Asked again after 1, 2, 4, 8 and 16 ms (createdVisibleWait 31 ms).
			calls: []string{"CreateTopic orders", "DescribeTopic orders", "DescribeTopic orders", "DescribeTopic orders",
				"DescribeTopic orders", "DescribeTopic orders", "DescribeTopic orders"},
			want: passOutcome{events: []string{}, next: "retry"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 2}, Spec: tc.spec}
			topic.Status = kairov1alpha1.TopicStatus{TopicID: tc.id, ObservedGeneration: tc.last.observed,
				Conditions: tc.last.conditions()}
			rec := events.NewFakeRecorder(10)
			p := &topicObjectPass{kind: topicKind{}, recorder: rec, resync: testResyncInterval, obj: topic,
				cluster: decisionCluster(), name: name, status: *topic.Status.DeepCopy()}

			res, err := newTopicPass(p, tc.brokers).ensure(context.Background())

			outcome(p.status.Conditions, rec, res, err).check(t, tc.want)
			if !slices.Equal(tc.brokers.calls, tc.calls) {
				t.Errorf("broker calls = %q, want %q", tc.brokers.calls, tc.calls)
			}
			if p.status.TopicID != tc.wantID {
				t.Errorf("status.topicId = %q, want %q", p.status.TopicID, tc.wantID)
			}
		})
	}
}

// TestSameConfig: the brokers' overrides match the spec's when they hold the
// same keys with the same values, integers compared as numbers.
func TestSameConfig(t *testing.T) {
	for _, tc := range []struct {
		name         string
		broker, spec map[string]string
		same         bool
	}{
		{"both empty", nil, map[string]string{}, true},
		{"equal", map[string]string{"retention.ms": "60000", "cleanup.policy": "delete"},
			map[string]string{"cleanup.policy": "delete", "retention.ms": "60000"}, true},
		{"integers as numbers", map[string]string{"retention.ms": "7"}, map[string]string{"retention.ms": "007"}, true},
		{"negative integers", map[string]string{"retention.bytes": "-1"}, map[string]string{"retention.bytes": "-01"}, true},
		{"other number", map[string]string{"retention.ms": "7"}, map[string]string{"retention.ms": "8"}, false},
		{"words compare as written", map[string]string{"cleanup.policy": "Delete"}, map[string]string{"cleanup.policy": "delete"}, false},
		{"a key only on the brokers", map[string]string{"retention.ms": "7", "segment.bytes": "1024"},
			map[string]string{"retention.ms": "7"}, false},
		{"a key only in the spec", map[string]string{}, map[string]string{"retention.ms": "7"}, false},
		{"same count, other keys", map[string]string{"retention.ms": "7"}, map[string]string{"segment.ms": "7"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameConfig(tc.broker, tc.spec); got != tc.same {
				t.Errorf("sameConfig(%v, %v) = %v, want %v", tc.broker, tc.spec, got, tc.same)
			}
		})
	}
}

// TestTopicDeleteDecisions: a Topic being deleted removes the topic only
// when it is the one it managed.
func TestTopicDeleteDecisions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		id      string
		brokers *fakeBrokers
		calls   []string
		event   string
		left    bool // the topic is still on the brokers
	}{
		{"deletes the topic it managed", "id-7", newFakeBrokers().withTopic("orders", "id-7", 3, 1, nil),
			[]string{"DescribeTopic orders", "DeleteTopic orders"}, `Normal TopicDeleted Deleted topic "orders" on the brokers`, false},
		{"leaves a topic of the same name with another id", "id-7", newFakeBrokers().withTopic("orders", "id-9", 3, 1, nil),
			[]string{"DescribeTopic orders"},
			`Warning TopicNotOwned Topic "orders" on the brokers has id id-9, not id-7 which this resource managed; it was left on the brokers`, true},
		{"is done when the topic is already gone", "id-7", newFakeBrokers(),
			[]string{"DescribeTopic orders"}, `Normal TopicDeleted Topic "orders" was already gone from the brokers`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// No finalizer on the object: release has nothing to patch.
			topic := &kairov1alpha1.Topic{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orders"}}
			rec := events.NewFakeRecorder(10)
			p := &topicObjectPass{kind: topicKind{}, recorder: rec, resync: testResyncInterval, obj: topic,
				cluster: decisionCluster(), name: "orders", status: kairov1alpha1.TopicStatus{TopicID: tc.id}}
			if _, err := newTopicPass(p, tc.brokers).delete(context.Background()); err != nil {
				t.Fatal(err)
			}
			close(rec.Events)
			var got []string
			for e := range rec.Events {
				got = append(got, e)
			}
			if !slices.Equal(got, []string{tc.event}) {
				t.Errorf("events = %q, want %q", got, tc.event)
			}
			if !slices.Equal(tc.brokers.calls, tc.calls) {
				t.Errorf("broker calls = %q, want %q", tc.brokers.calls, tc.calls)
			}
			if _, left := tc.brokers.topics["orders"]; left != tc.left || !p.released {
				t.Errorf("topic left on the brokers = %v, want %v; released = %v", left, tc.left, p.released)
			}
		})
	}
}
