package controllers

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// stuckReasons are the container waiting reasons a user has to act on: a
// wrong image or tag, a refused security context, a crash loop. They are
// what `kubectl get pods` shows in STATUS, and the cluster's Ready
// condition repeats them so that `kubectl get kc` says why brokers are not
// ready.
var stuckReasons = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "CrashLoopBackOff": true,
}

// stuckPods describes the brokers whose container is stuck, in broker
// order: "kairo-0: ImagePullBackOff (Back-off pulling image …)".
func stuckPods(pods map[int32]*corev1.Pod) string {
	ids := make([]int32, 0, len(pods))
	for id := range pods {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []string
	for _, id := range ids {
		pod := pods[id]
		if pod == nil || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && stuckReasons[w.Reason] {
				s := fmt.Sprintf("%s: %s", pod.Name, w.Reason)
				if w.Message != "" {
					s += " (" + w.Message + ")"
				}
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, "; ")
}
