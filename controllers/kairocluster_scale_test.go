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
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

// TestScaleDownRefusals: a refused scale down names every reason that
// applies, not only the first one checked.
func TestScaleDownRefusals(t *testing.T) {
	topics := func(rfs ...int16) *api.Metadata {
		m := &api.Metadata{Topics: []api.TopicDescription{
			{Name: "__consumer_offsets", Internal: true, ReplicationFactor: 3}}}
		for i, rf := range rfs {
			m.Topics = append(m.Topics, api.TopicDescription{Name: []string{"audit", "orders", "wide"}[i], ReplicationFactor: rf})
		}
		return m
	}
	const (
		voterRule = "brokers 0 to 2 are the voters of the metadata quorum and cannot be removed"
		orders3   = "topic orders has 3 replicas per partition, so the topics need at least 3 brokers"
		wide4     = "topic wide has 4 replicas per partition, so the topics need at least 4 brokers"
	)
	for _, tc := range []struct {
		name   string
		want   int32
		voters int32
		meta   *api.Metadata
		expect []string
	}{
		{"3 to 1 with replicas-3 topics: both rules", 1, 3, topics(1, 3), []string{voterRule, orders3}},
		{"below the voters, admin API unreachable: the voter rule only", 1, 3, nil, []string{voterRule}},
		{"the widest topic is named", 2, 3, topics(2, 3, 4), []string{voterRule, wide4}},
		{"enough brokers for every topic", 3, 3, topics(3, 3), nil},
		{"a topic too wide, voters kept", 3, 3, topics(1, 3, 4), []string{wide4}},
		{"one voter, one broker left, replicas-1 topics", 1, 1, &api.Metadata{Topics: []api.TopicDescription{{Name: "orders", ReplicationFactor: 1}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := scaleDownRefusals(tc.want, tc.voters, tc.meta)
			if !slices.Equal(got, tc.expect) {
				t.Errorf("scaleDownRefusals(%d, %d voters) =\n  %q\nwant\n  %q", tc.want, tc.voters, got, tc.expect)
			}
		})
	}
}
