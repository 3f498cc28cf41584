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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/controllers/resources"
)

func TestQuorumCondition(t *testing.T) {
	tests := []struct {
		name    string
		voters  []int32
		status  metav1.ConditionStatus
		reason  string
		message string
	}{
		{"one voter", []int32{0}, metav1.ConditionFalse, ReasonOneVoter,
			"The metadata quorum has one voter, broker 0: while it restarts or is down, no topic, partition leader or " +
				"group coordinator can change, and its partitions stop; restarting the other brokers does not touch the quorum. " +
				"Adding brokers adds no voter: a cluster created with three or more brokers has three"},
		{"two voters", []int32{1, 0}, metav1.ConditionFalse, ReasonTwoVoters,
			"The metadata quorum has two voters, brokers 0 and 1: a majority needs both, so the quorum stops whenever " +
				"either one restarts or fails, at every step of a rolling restart too, and no topic, partition leader or " +
				"group coordinator can change until it is back. Once both are alive the operator makes broker 1 a non-voter, " +
				"so that only restarts of broker 0 stop the quorum"},
		{"three voters", []int32{0, 1, 3}, metav1.ConditionTrue, ReasonToleratesBrokerLoss,
			"The metadata quorum has 3 voters (brokers 0, 1, 3) and goes on while any one of them restarts or fails"},
		{"four voters tolerate one loss, as three do", []int32{0, 1, 2, 3}, metav1.ConditionTrue, ReasonToleratesBrokerLoss,
			"The metadata quorum has 4 voters (brokers 0, 1, 2, 3) and goes on while any one of them restarts or fails"},
		{"five voters", []int32{0, 1, 2, 3, 4}, metav1.ConditionTrue, ReasonToleratesBrokerLoss,
			"The metadata quorum has 5 voters (brokers 0, 1, 2, 3, 4) and goes on while any 2 of them restart or fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := quorumCondition(tt.voters)
			if c.Status != tt.status || c.Reason != tt.reason || c.Message != tt.message {
				t.Errorf("quorumCondition(%v) =\n  %s %s %q\nwant\n  %s %s %q", tt.voters, c.Status, c.Reason, c.Message, tt.status, tt.reason, tt.message)
			}
		})
	}
}

// TestQuorumVoters: the brokers' own report wins over the voters fixed at
// creation (a voter may have been replaced since), which stand in while
// the admin API cannot be reached.
func TestQuorumVoters(t *testing.T) {
	brokers := func(voters ...bool) *api.Metadata {
		m := &api.Metadata{}
		for i, v := range voters {
			m.Brokers = append(m.Brokers, api.BrokerInfo{ID: int32(i), Voter: v})
		}
		return m
	}
	tests := []struct {
		name    string
		meta    *api.Metadata
		builder *resources.Builder
		want    []int32
	}{
		{"from the brokers", brokers(true, false, true, true), &resources.Builder{Voters: 3}, []int32{0, 2, 3}},
		{"admin API unreachable: the initial voters", nil, &resources.Builder{Voters: 2}, []int32{0, 1}},
		{"nothing known", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := quorumVoters(&reconcileState{meta: tt.meta, builder: tt.builder})
			if len(got) != len(tt.want) {
				t.Fatalf("voters %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("voters %v, want %v", got, tt.want)
				}
			}
		})
	}
}
