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
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// The decision tables run one pass of a Topic or ConsumerGroup against
// fakeBrokers, without an API server: they check the Ready condition, the
// events and the broker calls a pass makes, to the message a user reads.

const testResyncInterval = time.Minute

// decisionCluster is the KairoCluster of the tables; its brokers are at a
// fixed address so that messages naming it are exact.
func decisionCluster() *kairov1alpha1.KairoCluster {
	return &kairov1alpha1.KairoCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kairo",
		Annotations: map[string]string{kairov1alpha1.EndpointOverrideAnnotation: "http://10.0.0.1:8080"}}}
}

// lastPass is the status an earlier pass left: Ready with status and reason
// (none when reason is empty), at generation observed.
type lastPass struct {
	ready    metav1.ConditionStatus
	reason   string
	observed int64
}

func (l lastPass) conditions() []metav1.Condition {
	if l.reason == "" {
		return nil
	}
	return []metav1.Condition{{Type: kairov1alpha1.ConditionReady, Status: l.ready, Reason: l.reason,
		ObservedGeneration: l.observed, LastTransitionTime: metav1.Now()}}
}

// passOutcome is what a pass decided, in the words a user reads.
type passOutcome struct {
	// ready is "True Created", "False Incompatible", ….
	ready, message string
	// events are "Normal TopicCreated <note>", in order.
	events []string
	// next is "resync", "poll" or "retry" (an error for the rate limiter).
	next string
}

func outcome(conds []metav1.Condition, rec *events.FakeRecorder, res ctrl.Result, err error) passOutcome {
	var out passOutcome
	if c := meta.FindStatusCondition(conds, kairov1alpha1.ConditionReady); c != nil {
		out.ready, out.message = string(c.Status)+" "+c.Reason, c.Message
	}
	close(rec.Events)
	for e := range rec.Events {
		out.events = append(out.events, e)
	}
	var retry errBrokerRetry
	switch {
	case errors.As(err, &retry):
		out.next = "retry"
	case err != nil:
		out.next = "error: " + err.Error()
	case res.RequeueAfter >= testResyncInterval:
		out.next = "resync"
	case res.RequeueAfter == pendingPoll:
		out.next = "poll"
	}
	return out
}

func (o passOutcome) check(t *testing.T, want passOutcome) {
	t.Helper()
	if o.ready != want.ready {
		t.Errorf("Ready = %q, want %q", o.ready, want.ready)
	}
	if want.message != "" && o.message != want.message {
		t.Errorf("Ready message = %q\n                    want %q", o.message, want.message)
	}
	if !slices.Equal(o.events, want.events) {
		t.Errorf("events = %q\n   want %q", o.events, want.events)
	}
	if o.next != want.next {
		t.Errorf("next pass = %q, want %q", o.next, want.next)
	}
}
