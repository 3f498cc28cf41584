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
	"fmt"
	"reflect"
	"sort"
	"strings"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kairov1alpha1 "github.com/kairolog/kairolog/api/v1alpha1"
)

// topicStatuses are the statuses of every Topic of the scale namespace, by
// name: one list, so that taking them does not load the API server.
func topicStatuses() map[string]kairov1alpha1.TopicStatus {
	var list kairov1alpha1.TopicList
	Expect(k8sClient.List(ctx, &list, client.InNamespace(scaleNamespace))).To(Succeed())
	out := make(map[string]kairov1alpha1.TopicStatus, len(list.Items))
	for _, t := range list.Items {
		out[t.Name] = t.Status
	}
	return out
}

// statusHealth says how many Topics have under-replicated or offline
// partitions, and the Ready reasons.
func statusHealth(st map[string]kairov1alpha1.TopicStatus) string {
	under, offline := 0, 0
	reasons := map[string]int{}
	for _, s := range st {
		if s.UnderReplicatedPartitions > 0 {
			under++
		}
		if s.OfflinePartitions > 0 {
			offline++
		}
		reasons[condition(s.Conditions, kairov1alpha1.ConditionReady).Reason]++
	}
	return fmt.Sprintf("%d Topics with under-replicated partitions, %d with offline partitions; Ready reasons %v", under, offline, reasons)
}

// statusChanges says which parts of the Topics' statuses differ between two
// moments, counting Topics per part.
func statusChanges(before, after map[string]kairov1alpha1.TopicStatus) string {
	parts := map[string]int{}
	changed := 0
	for name, a := range after {
		b, ok := before[name]
		if !ok || reflect.DeepEqual(a, b) {
			continue
		}
		changed++
		ca, cb := condition(a.Conditions, kairov1alpha1.ConditionReady), condition(b.Conditions, kairov1alpha1.ConditionReady)
		if ca.Reason != cb.Reason || ca.Message != cb.Message || ca.Status != cb.Status {
			parts[fmt.Sprintf("Ready %s→%s", cb.Reason, ca.Reason)]++
		}
		if a.UnderReplicatedPartitions != b.UnderReplicatedPartitions {
			parts["underReplicatedPartitions"]++
		}
		if a.OfflinePartitions != b.OfflinePartitions {
			parts["offlinePartitions"]++
		}
		for i := range min(len(a.PartitionStatuses), len(b.PartitionStatuses)) {
			pa, pb := a.PartitionStatuses[i], b.PartitionStatuses[i]
			if pa.Leader != pb.Leader {
				parts["a partition's leader"]++
			}
			if !reflect.DeepEqual(pa.ISR, pb.ISR) {
				parts["a partition's ISR"]++
			}
			if pa.HighWatermark != pb.HighWatermark {
				parts[fmt.Sprintf("a partition's high watermark %d→%d", pb.HighWatermark, pa.HighWatermark)]++
			}
		}
	}
	var out []string
	for k, v := range parts {
		out = append(out, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(out)
	return fmt.Sprintf("%d Topics' statuses changed (%s)", changed, strings.Join(out, ", "))
}
