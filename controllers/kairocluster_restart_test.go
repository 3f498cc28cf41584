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
	"slices"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

// TestPlanRestart checks the rolling-restart rule without an API server:
// at most one broker at a time, never while another is down or out of an
// ISR, a broker that is down first, the controller last.
func TestPlanRestart(t *testing.T) {
	const cur, old = "new", "old"
	pods := func(hashes ...string) map[int32]podView {
		m := map[int32]podView{}
		for i, h := range hashes {
			m[int32(i)] = podView{exists: true, ready: true, running: true, hash: h}
		}
		return m
	}
	healthy := func(n int) map[int32]api.BrokerInfo {
		m := map[int32]api.BrokerInfo{}
		for i := 0; i < n; i++ {
			m[int32(i)] = api.BrokerInfo{ID: int32(i), State: api.BrokerAlive, InSync: true}
		}
		return m
	}
	with := func(m map[int32]podView, id int32, change func(*podView)) map[int32]podView {
		p := m[id]
		change(&p)
		m[id] = p
		return m
	}
	brokersWith := func(m map[int32]api.BrokerInfo, id int32, change func(*api.BrokerInfo)) map[int32]api.BrokerInfo {
		b := m[id]
		change(&b)
		m[id] = b
		return m
	}

	for _, tc := range []struct {
		name       string
		in         restartInput
		restart    int32
		askBrokers bool
		waitFor    string
		outdated   []int32
	}{
		{
			name:    "nothing outdated",
			in:      restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(cur, cur, cur), brokers: healthy(3), controller: 0},
			restart: -1,
		},
		{
			name:     "highest id first, the controller last",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(old, old, old), brokers: healthy(3), controller: 2},
			restart:  1,
			outdated: []int32{0, 1, 2}, askBrokers: true,
		},
		{
			name:     "the controller when it is the only one left",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(cur, old, cur), brokers: healthy(3), controller: 1},
			restart:  1,
			outdated: []int32{1}, askBrokers: true,
		},
		{
			name:     "the StatefulSet controller has not seen the template",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: false, pods: pods(old, old, old), brokers: healthy(3)},
			restart:  -1,
			outdated: []int32{0, 1, 2}, waitFor: "StatefulSet controller",
		},
		{
			name:     "a deleted pod still in the cache",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, deleting: "kairo-2", pods: pods(old, old, old), brokers: healthy(3)},
			restart:  -1,
			outdated: []int32{0, 1, 2}, waitFor: "kairo-2",
		},
		{
			name:     "a pod not recreated yet",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(old, old), brokers: healthy(3)},
			restart:  -1,
			outdated: []int32{0, 1}, waitFor: "broker 2 to be recreated",
		},
		{
			name: "the restarted broker is not ready yet",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, brokers: healthy(3),
				pods: with(pods(old, old, cur), 2, func(p *podView) { p.ready = false })},
			restart:  -1,
			outdated: []int32{0, 1}, waitFor: "[2] to be ready",
		},
		{
			name: "the restarted broker is ready but not back in every ISR",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(old, old, cur),
				brokers: brokersWith(healthy(3), 2, func(b *api.BrokerInfo) { b.InSync = false })},
			restart:  -1,
			outdated: []int32{0, 1}, waitFor: "[2] to be alive and back in every ISR",
		},
		{
			name: "a fenced broker",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(old, old, old),
				brokers: brokersWith(healthy(3), 0, func(b *api.BrokerInfo) { b.State = api.BrokerFenced })},
			restart:  -1,
			outdated: []int32{0, 1, 2}, waitFor: "[0] to be alive",
		},
		{
			name: "an outdated broker that is not running goes first, without asking",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, brokers: healthy(3), controller: 2,
				pods: with(pods(old, old, old), 0, func(p *podView) { p.ready, p.running = false, false })},
			restart:  0,
			outdated: []int32{0, 1, 2},
		},
		{
			name: "an outdated broker that is not ready but fenced goes first, without asking",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, controller: 2,
				brokers: brokersWith(healthy(3), 0, func(b *api.BrokerInfo) { b.State = api.BrokerFenced }),
				pods:    with(pods(old, old, old), 0, func(p *podView) { p.ready = false })},
			restart:  0,
			outdated: []int32{0, 1, 2},
		},
		{
			name: "an outdated broker that is not ready and not registered goes first, without asking",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, controller: 2,
				brokers: map[int32]api.BrokerInfo{1: healthy(3)[1], 2: healthy(3)[2]},
				pods:    with(pods(old, old, old), 0, func(p *podView) { p.ready = false })},
			restart:  0,
			outdated: []int32{0, 1, 2},
		},
		{
			// Not ready, but running and alive: it may lead partitions and
			// count in their ISRs, so it goes first only if stopping it is safe.
			name: "an outdated broker that is not ready but serving goes first, after asking",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, brokers: healthy(3), controller: 2,
				pods: with(pods(old, old, old), 0, func(p *podView) { p.ready = false })},
			restart:  0,
			outdated: []int32{0, 1, 2}, askBrokers: true,
		},
		{
			name: "a down broker goes before one that is only not ready",
			in: restartInput{hash: cur, replicas: 3, templateObserved: true, brokers: healthy(3), controller: 0,
				pods: with(with(pods(old, old, old), 2, func(p *podView) { p.ready = false }), 1, func(p *podView) { p.ready, p.running = false, false })},
			restart:  1,
			outdated: []int32{0, 1, 2},
		},
		{
			name:     "a broker that is not ready but running while the admin API is unreachable",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, pods: with(pods(old, old, old), 0, func(p *podView) { p.ready = false })},
			restart:  -1,
			outdated: []int32{0, 1, 2}, waitFor: "admin API: broker 0 is not ready but running",
		},
		{
			name:     "brokers unreachable",
			in:       restartInput{hash: cur, replicas: 3, templateObserved: true, pods: pods(old, old, old)},
			restart:  -1,
			outdated: []int32{0, 1, 2}, waitFor: "admin API",
		},
		{
			name: "pods beyond the StatefulSet's replicas do not count",
			in: restartInput{hash: cur, replicas: 2, templateObserved: true, brokers: healthy(2),
				pods: with(pods(cur, cur, old), 2, func(p *podView) { p.ready, p.running = false, false })},
			restart: -1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := planRestart(tc.in)
			if plan.restart != tc.restart || plan.askBrokers != tc.askBrokers {
				t.Errorf("restart %d (ask brokers %v), want %d (%v); wait %q", plan.restart, plan.askBrokers, tc.restart, tc.askBrokers, plan.wait)
			}
			if !slices.Equal(plan.outdated, tc.outdated) {
				t.Errorf("outdated %v, want %v", plan.outdated, tc.outdated)
			}
			if tc.waitFor != "" && !strings.Contains(plan.wait, tc.waitFor) {
				t.Errorf("wait %q, want it to mention %q", plan.wait, tc.waitFor)
			}
		})
	}
}
