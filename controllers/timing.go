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

// timing.go holds every interval, timeout and backoff of the reconcilers, so
// that the load the operator puts on the API server and the brokers can be
// read in one place. docs/operator.md and docs/operator-topics-groups.md
// quote them.

import (
	"math/rand/v2"
	"time"
)

// DefaultResyncInterval is how often a quiet resource is compared with its
// brokers when the reconciler's ResyncInterval is zero: a KairoCluster's
// broker-observed status, a Topic, a ConsumerGroup. The manager's
// --resync-interval sets it for all three.
const DefaultResyncInterval = 30 * time.Second

// DefaultProgressInterval is how often a KairoCluster is looked at while
// the operator waits on its brokers (a restarted broker rejoining its ISRs,
// a drain moving replicas) when the reconciler's ProgressInterval is zero.
const DefaultProgressInterval = 5 * time.Second

// DefaultBrokerTimeout bounds every call to a broker's admin API when
// ServiceBrokerClients.Timeout is zero (the manager's --broker-timeout).
const DefaultBrokerTimeout = 10 * time.Second

// Retry bounds of the Topic and ConsumerGroup reconcilers after a transient
// broker error: the first retry after brokerRetryBase, doubling up to
// brokerRetryMax, so an unreachable cluster costs a handful of calls a minute
// per resource and never a hot loop.
const (
	brokerRetryBase = time.Second
	brokerRetryMax  = 2 * time.Minute
)

// Retry bounds of the KairoCluster reconciler after a failed pass (an API
// error; unreachable brokers are a status, not a failure).
const (
	clusterRetryBase = 500 * time.Millisecond
	clusterRetryMax  = time.Minute
)

// A topic just created through one broker may not be visible yet on the
// broker the next call reaches (the client Service balances over them):
// the Topic pass asks again after createdVisiblePoll, doubling, while the
// waits add up to at most createdVisibleWait, before it gives up and
// retries the whole pass. Variables so that tests can shorten them.
var (
	createdVisiblePoll = 50 * time.Millisecond
	createdVisibleWait = 2 * time.Second
)

// pendingPoll bounds how long a Topic or ConsumerGroup waiting on the
// brokers (a reassignment, a group that must empty) goes unobserved.
const pendingPoll = 10 * time.Second

// expectationTimeout bounds how long a pod deletion the cache never shows
// is waited for before a rolling restart goes on.
const expectationTimeout = 5 * time.Minute

// resyncAfter spreads observation passes over 10% of the interval so that a
// thousand resources created together do not all ask the brokers in the same
// second ever after. It never returns less than the interval, so a resource
// is asked at most once per interval.
func resyncAfter(interval time.Duration) time.Duration {
	return interval + time.Duration(rand.Int64N(int64(interval/10)+1))
}

// pollAfter is how soon a resource waiting on the brokers is looked at again.
func pollAfter(interval time.Duration) time.Duration {
	return min(interval, pendingPoll)
}
