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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

// quorumCondition says whether the metadata quorum of voters (broker ids)
// goes on through the restart or loss of any one broker. A quorum commits
// with a majority of its voters, so it tolerates the loss of (v-1)/2 of
// them: one voter or two tolerate none. The operator gives a new cluster
// three voters, or one when it has fewer than three brokers (never two:
// with two, every restart of either broker stops the quorum, while with
// one only a restart of broker 0 does). A cluster created with two voters
// by an earlier operator keeps them, and this condition says what that
// costs.
func quorumCondition(voters []int32) metav1.Condition {
	slices.Sort(voters)
	cond := metav1.Condition{Type: kairov1alpha1.ConditionQuorumFaultTolerant, Status: metav1.ConditionFalse}
	switch len(voters) {
	case 1:
		cond.Reason = ReasonOneVoter
		cond.Message = fmt.Sprintf("The metadata quorum has one voter, broker %d: while it restarts or is down, "+
			"no topic, partition leader or group coordinator can change, and its partitions stop; "+
			"restarting the other brokers does not touch the quorum. Adding brokers adds no voter: "+
			"a cluster created with three or more brokers has three", voters[0])
	case 2:
		cond.Reason = ReasonTwoVoters
		cond.Message = fmt.Sprintf("The metadata quorum has two voters, brokers %d and %d: a majority needs both, "+
			"so the quorum stops whenever either one restarts or fails, at every step of a rolling restart too, "+
			"and no topic, partition leader or group coordinator can change until it is back. "+
			"Once both are alive the operator makes broker %d a non-voter, so that only restarts of broker %d stop the quorum",
			voters[0], voters[1], voters[1], voters[0])
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonToleratesBrokerLoss
		ids := make([]string, len(voters))
		for i, v := range voters {
			ids[i] = fmt.Sprint(v)
		}
		lose := "any one of them restarts or fails"
		if f := (len(voters) - 1) / 2; f > 1 {
			lose = fmt.Sprintf("any %d of them restart or fail", f)
		}
		cond.Message = fmt.Sprintf("The metadata quorum has %d voters (brokers %s) and goes on while %s",
			len(voters), strings.Join(ids, ", "), lose)
	}
	return cond
}

// quorumVoters are the voters of the cluster's metadata quorum: as the
// brokers report them, or, while the admin API cannot be reached, the
// initial voters fixed at creation. It returns nil when neither is known.
func quorumVoters(st *reconcileState) []int32 {
	if st.meta != nil {
		var out []int32
		for _, b := range st.meta.Brokers {
			if b.Voter {
				out = append(out, b.ID)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if st.builder == nil || st.builder.Voters < 1 {
		return nil
	}
	out := make([]int32, st.builder.Voters)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// reduceTwoVoters runs a two-voter quorum on one voter: once both voters
// are alive it demotes the higher id (POST /brokers/{id}/demote), which
// stays a broker and follows the metadata as a non-voter. Two voters
// survive no more than one does, and stop the quorum whenever either one
// restarts; one stops it only while it restarts itself. Only clusters
// created by an earlier operator, which gave two-broker clusters two
// voters, have them. A failed call is logged and tried again on the next
// pass; the condition meanwhile says what two voters cost.
func (r *KairoClusterReconciler) reduceTwoVoters(ctx context.Context, st *reconcileState) (bool, error) {
	if st.meta == nil || st.brokers == nil {
		return true, nil
	}
	voters := quorumVoters(st)
	if len(voters) != 2 {
		return true, nil
	}
	for _, id := range voters {
		if b := st.broker(id); b == nil || b.State != api.BrokerAlive {
			return true, nil
		}
	}
	slices.Sort(voters)
	keep, demote := voters[0], voters[1]
	if err := st.brokers.DemoteVoter(ctx, demote); err != nil {
		st.log.Error(err, "Failed to run the two-voter metadata quorum on one voter", "broker", demote)
		return true, nil
	}
	st.broker(demote).Voter = false // the status this pass shows the quorum as it now is
	r.event(st.cluster, nil, corev1.EventTypeNormal, ReasonQuorumReduced, "DemoteVoter",
		"Broker %d no longer votes in the metadata quorum: with two voters, every restart of either broker stopped the quorum; now only restarts of broker %d do",
		demote, keep)
	return true, nil
}
