package nodeagent

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
}

func exited(code int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
}

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func TestPodPhase(t *testing.T) {
	for _, tc := range []struct {
		name string
		view podView
		want corev1.PodPhase
	}{
		{"init containers running", podView{initDone: false}, corev1.PodPending},
		{"init container failed for good", podView{initFailed: true}, corev1.PodFailed},
		{"image not pulled yet", podView{initDone: true, containers: []containerView{{state: waiting("ErrImagePull")}}}, corev1.PodPending},
		{"running", podView{initDone: true, containers: []containerView{{state: running(), everStarted: true}}}, corev1.PodRunning},
		{"crash loop", podView{initDone: true, containers: []containerView{{state: waiting("CrashLoopBackOff"), lastState: exited(1), everStarted: true, willRestart: true}}}, corev1.PodRunning},
		{"exited, will restart", podView{initDone: true, containers: []containerView{{state: exited(0), everStarted: true, willRestart: true}}}, corev1.PodRunning},
		{"all succeeded", podView{initDone: true, containers: []containerView{{state: exited(0), everStarted: true}, {state: exited(0), everStarted: true}}}, corev1.PodSucceeded},
		{"one failed", podView{initDone: true, containers: []containerView{{state: exited(0), everStarted: true}, {state: exited(2), everStarted: true}}}, corev1.PodFailed},
		{"one still running", podView{initDone: true, containers: []containerView{{state: exited(2), everStarted: true}, {state: running(), everStarted: true}}}, corev1.PodRunning},
	} {
		if got := podPhase(tc.view); got != tc.want {
			t.Errorf("%s: phase %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPodStatusConditions(t *testing.T) {
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		}},
	}
	v := podView{pod: pod, podIP: "127.0.20.2", hostIP: "127.0.20.1", sandboxReady: true, initDone: true,
		containers: []containerView{{spec: corev1.Container{Name: "broker"}, state: running(), everStarted: true, ready: true, started: true}}}
	t0 := metav1.Unix(100, 0)
	st := podStatus(v, nil, t0)
	cond := func(st corev1.PodStatus, ct corev1.PodConditionType) corev1.PodCondition {
		for _, c := range st.Conditions {
			if c.Type == ct {
				return c
			}
		}
		t.Fatalf("no %s condition", ct)
		return corev1.PodCondition{}
	}
	if st.PodIP != "127.0.20.2" || len(st.PodIPs) != 1 || st.HostIP != "127.0.20.1" || st.Phase != corev1.PodRunning {
		t.Errorf("status = %+v", st)
	}
	if cond(st, corev1.ContainersReady).Status != corev1.ConditionTrue {
		t.Error("ContainersReady should be True")
	}
	if c := cond(st, corev1.PodReady); c.Status != corev1.ConditionFalse || c.Reason != "ReadinessGatesNotReady" {
		t.Errorf("Ready = %+v; the readiness gate is not met", c)
	}
	if cond(st, corev1.PodScheduled).Status != corev1.ConditionTrue {
		t.Error("the scheduler's condition was dropped")
	}

	// The gate passes: Ready flips, and only Ready's transition time moves.
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue})
	t1 := metav1.Unix(200, 0)
	st2 := podStatus(v, &st, t1)
	if c := cond(st2, corev1.PodReady); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&t1) {
		t.Errorf("Ready = %+v, want True since t1", c)
	}
	if c := cond(st2, corev1.ContainersReady); !c.LastTransitionTime.Equal(&t0) {
		t.Errorf("ContainersReady moved to %v without changing", c.LastTransitionTime)
	}
}
