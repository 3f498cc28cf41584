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
	"fmt"
	"net/http"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

// brokerFailure is a broker call that failed, sorted for the Ready condition.
type brokerFailure struct {
	// reason is ClusterNotReady (unreachable, not ready), BrokerError or
	// NotSupported.
	reason string
	// message is what the condition says.
	message string
	// transient failures are retried with backoff; the others wait for the
	// next resync or a spec change, since repeating the call cannot help.
	transient bool
}

// classify sorts a broker call's error. Transport errors and 503s mean the
// brokers cannot answer now; other error replies are the brokers refusing
// the request.
func classify(cluster *kairov1alpha1.KairoCluster, what string, err error) brokerFailure {
	var be *api.Error
	if !errors.As(err, &be) {
		return brokerFailure{reason: ReasonClusterNotReady, transient: true,
			message: fmt.Sprintf("Brokers of KairoCluster %q unreachable at %s: %s: %v", cluster.Name, BrokerEndpoint(cluster), what, err)}
	}
	switch {
	case be.Code == api.CodeNotReady || be.Code == api.CodeBrokerUnavailable:
		return brokerFailure{reason: ReasonClusterNotReady, transient: true,
			message: fmt.Sprintf("Brokers of KairoCluster %q are not ready: %s: %v", cluster.Name, what, err)}
	case be.Status >= http.StatusInternalServerError, be.Code == api.CodeTopicDeletionInProgress,
		be.Code == api.CodeReassignmentInProgress:
		return brokerFailure{reason: ReasonBrokerError, transient: true,
			message: fmt.Sprintf("%s: %v", what, err)}
	case be.Code == api.CodeNotFound || be.Code == api.CodeMethodNotAllowed:
		// The path itself is unknown: a broker older than this operator.
		return brokerFailure{reason: ReasonNotSupported,
			message: fmt.Sprintf("The brokers do not support this operation: %s: %v", what, err)}
	}
	return brokerFailure{reason: ReasonBrokerError, message: fmt.Sprintf("%s: %v", what, err)}
}

// brokerMessage is the brokers' own words for an error reply.
func brokerMessage(err error) string {
	var be *api.Error
	if errors.As(err, &be) {
		return be.Message
	}
	return err.Error()
}

// errBrokerRetry is returned from Reconcile after a transient broker
// failure so that the controller's rate limiter spaces the retries; the
// failure itself is already in the Ready condition.
type errBrokerRetry struct{ msg string }

func (e errBrokerRetry) Error() string { return e.msg }
