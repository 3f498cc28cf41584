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
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

// eventRecorder is how every reconciler gets its recorder: the one it was
// given, else the manager's recorder for events.k8s.io/v1 events named after
// the controller (kairolog-topic-controller, …), which is what `kubectl
// events` shows as the reporting controller.
func eventRecorder(mgr ctrl.Manager, given events.EventRecorder, controller string) events.EventRecorder {
	if given != nil {
		return given
	}
	return mgr.GetEventRecorder("kairolog-" + controller + "-controller")
}

// recordEvent records an event about regarding; related names a second
// object the event concerns (a child of a KairoCluster), or is nil. The note
// is also the event's message. A nil recorder records nothing, so a
// reconciler built by hand in a test needs none.
func recordEvent(rec events.EventRecorder, regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	if rec == nil {
		return
	}
	if related != nil {
		// A typed nil (a *Pod that was not found) is no related object.
		if v := reflect.ValueOf(related); v.Kind() == reflect.Pointer && v.IsNil() {
			related = nil
		}
	}
	rec.Eventf(regarding, related, eventType, reason, action, note, args...)
}
