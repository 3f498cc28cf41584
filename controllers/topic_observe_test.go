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

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
	"github.com/kairolog/kairolog/broker/api"
)

// TestObserveUnknownHighWatermark: a partition whose offsets the brokers
// did not report (-1) does not change the status: it keeps the high
// watermark last observed, and a topic the pass created starts at 0. On
// three brokers, a describe right after a create often reaches a leader
// that has not opened its replica yet; writing -1 then cost every new
// Topic a second status write at its first idle resync.
func TestObserveUnknownHighWatermark(t *testing.T) {
	for _, tc := range []struct {
		name     string
		created  bool
		last     []int64 // the last observed high watermarks; nil: none
		reported []int64
		want     []int64
	}{
		{name: "a topic this pass created starts at 0", created: true,
			reported: []int64{-1, 0, -1}, want: []int64{0, 0, 0}},
		{name: "an unknown value keeps the last observed one",
			last: []int64{5, 0, 7}, reported: []int64{-1, -1, 9}, want: []int64{5, 0, 9}},
		{name: "known values replace the last observed ones",
			last: []int64{5, 6, 7}, reported: []int64{8, 0, 7}, want: []int64{8, 0, 7}},
		{name: "an existing topic seen for the first time shows what is reported",
			reported: []int64{-1, 3, 0}, want: []int64{-1, 3, 0}},
		{name: "a partition added since the last pass shows what is reported",
			last: []int64{5, 6}, reported: []int64{-1, -1, -1}, want: []int64{5, 6, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var status kairov1alpha1.TopicStatus
			for i, hw := range tc.last {
				status.PartitionStatuses = append(status.PartitionStatuses,
					kairov1alpha1.PartitionStatus{Partition: int32(i), Leader: 0, HighWatermark: hw})
			}
			desc := &api.TopicDescription{Name: "orders", TopicID: "id-1", PartitionCount: int32(len(tc.reported)), ReplicationFactor: 3}
			for i, hw := range tc.reported {
				desc.Partitions = append(desc.Partitions, api.PartitionDescription{Partition: int32(i), Leader: 0,
					Replicas: []int32{0, 1, 2}, ISR: []int32{0, 1, 2}, HighWatermark: hw})
			}
			p := &topicPass{topicObjectPass: &topicObjectPass{status: status}, created: tc.created}

			p.observe(desc)

			var got []int64
			for _, ps := range p.status.PartitionStatuses {
				got = append(got, ps.HighWatermark)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("high watermarks = %v, want %v", got, tc.want)
			}
		})
	}
}
