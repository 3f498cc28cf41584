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
	"net/http"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

// TestClassify: how a failed broker call shows in Ready, and whether it is
// retried with backoff (transient) or waits for the next resync.
func TestClassify(t *testing.T) {
	cluster := decisionCluster()
	for _, tc := range []struct {
		name      string
		err       error
		reason    string
		message   string
		transient bool
	}{
		{"a transport error: the brokers are unreachable",
			errors.New("dial tcp 10.0.0.1:8080: connect: connection refused"), ReasonClusterNotReady,
			`Brokers of KairoCluster "kairo" unreachable at http://10.0.0.1:8080: Describe topic orders: dial tcp 10.0.0.1:8080: connect: connection refused`,
			true},
		{"brokers not ready", api.Errorf(api.CodeNotReady, "metadata not loaded"), ReasonClusterNotReady,
			`Brokers of KairoCluster "kairo" are not ready: Describe topic orders: 503 NOT_READY: metadata not loaded`, true},
		{"no broker available", api.Errorf(api.CodeBrokerUnavailable, "no controller"), ReasonClusterNotReady,
			`Brokers of KairoCluster "kairo" are not ready: Describe topic orders: 503 BROKER_UNAVAILABLE: no controller`, true},
		{"a server error", api.Errorf(api.CodeInternal, "disk full"), ReasonBrokerError,
			"Describe topic orders: 500 INTERNAL: disk full", true},
		{"a deletion in progress passes", &api.Error{Status: http.StatusConflict,
			Code: api.CodeTopicDeletionInProgress, Message: "deleting"}, ReasonBrokerError,
			"Describe topic orders: 409 TOPIC_DELETION_IN_PROGRESS: deleting", true},
		{"a reassignment in progress passes", api.Errorf(api.CodeReassignmentInProgress, "moving"), ReasonBrokerError,
			"Describe topic orders: 409 REASSIGNMENT_IN_PROGRESS: moving", true},
		{"an unknown path: an older broker", api.Errorf(api.CodeNotFound, "no route"), ReasonNotSupported,
			"The brokers do not support this operation: Describe topic orders: 404 NOT_FOUND: no route", false},
		{"an unknown method: an older broker", api.Errorf(api.CodeMethodNotAllowed, "PATCH"), ReasonNotSupported,
			"The brokers do not support this operation: Describe topic orders: 405 METHOD_NOT_ALLOWED: PATCH", false},
		{"a refusal stays until the spec changes", api.Errorf(api.CodeInvalidConfig, "retention.ms: not a number"),
			ReasonBrokerError, "Describe topic orders: 400 INVALID_CONFIG: retention.ms: not a number", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := classify(cluster, "Describe topic orders", tc.err)
			if f.reason != tc.reason || f.message != tc.message || f.transient != tc.transient {
				t.Errorf("classify = {%s %q transient=%v}\n    want {%s %q transient=%v}",
					f.reason, f.message, f.transient, tc.reason, tc.message, tc.transient)
			}
			if !strings.HasPrefix(f.message, strings.ToUpper(f.message[:1])) {
				t.Errorf("message %q does not start with a capital", f.message)
			}
		})
	}
}
