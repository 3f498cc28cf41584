package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStuckPods(t *testing.T) {
	pod := func(name, reason, msg string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		st := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
		if reason != "" {
			st = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "broker", State: st}}
		return p
	}
	for _, tc := range []struct {
		name string
		pods map[int32]*corev1.Pod
		want string
	}{
		{"all running", map[int32]*corev1.Pod{0: pod("kairo-0", "", ""), 1: pod("kairo-1", "", "")}, ""},
		{"starting is not stuck", map[int32]*corev1.Pod{0: pod("kairo-0", "ContainerCreating", "")}, ""},
		{"a bad tag, in broker order", map[int32]*corev1.Pod{
			1: pod("kairo-1", "ErrImagePull", "not found"),
			0: pod("kairo-0", "ImagePullBackOff", `Back-off pulling image "kairolog/broker:nope"`),
			2: pod("kairo-2", "", ""),
		}, `kairo-0: ImagePullBackOff (Back-off pulling image "kairolog/broker:nope"); kairo-1: ErrImagePull (not found)`},
		{"a crash loop", map[int32]*corev1.Pod{0: pod("kairo-0", "CrashLoopBackOff", "")}, "kairo-0: CrashLoopBackOff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stuckPods(tc.pods); got != tc.want {
				t.Errorf("stuckPods = %q, want %q", got, tc.want)
			}
		})
	}
}
