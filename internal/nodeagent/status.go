package nodeagent

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// containerView is what the pod status needs to know about one container.
type containerView struct {
	spec         corev1.Container
	state        corev1.ContainerState
	lastState    corev1.ContainerState
	restarts     int32
	ready        bool
	started      bool
	containerID  string
	imageID      string
	imageRef     string // the normalised reference of a pulled image
	willRestart  bool   // a terminated container that the restart policy brings back
	everStarted  bool
	successfully bool // for init containers: exited 0
}

func (v containerView) status() corev1.ContainerStatus {
	started := v.started
	image := v.spec.Image
	if v.imageRef != "" {
		image = v.imageRef // as a runtime reports it: docker.io/kairolog/broker:dev
	}
	return corev1.ContainerStatus{
		Name:                 v.spec.Name,
		Image:                image,
		ImageID:              v.imageID,
		ContainerID:          v.containerID,
		State:                v.state,
		LastTerminationState: v.lastState,
		Ready:                v.ready,
		Started:              &started,
		RestartCount:         v.restarts,
	}
}

// podView is the node's knowledge of one pod at one instant.
type podView struct {
	pod            *corev1.Pod // spec and the conditions others own
	podIP, hostIP  string
	startTime      metav1.Time
	sandboxReady   bool
	initContainers []containerView
	containers     []containerView
	initDone       bool
	initFailed     bool // an init container failed and will not be retried
	reason, msg    string
}

// podStatus derives the PodStatus the kubelet would report. prev supplies
// condition transition times so they only move when a condition changes.
func podStatus(v podView, prev *corev1.PodStatus, now metav1.Time) corev1.PodStatus {
	st := corev1.PodStatus{
		ObservedGeneration: v.pod.Generation,
		Phase:              podPhase(v),
		HostIP:             v.hostIP,
		StartTime:          &v.startTime,
		QOSClass:           v.pod.Status.QOSClass,
		Reason:             v.reason,
		Message:            v.msg,
		// Fields other components own.
		NominatedNodeName:     v.pod.Status.NominatedNodeName,
		ResourceClaimStatuses: v.pod.Status.ResourceClaimStatuses,
	}
	if v.hostIP != "" {
		st.HostIPs = []corev1.HostIP{{IP: v.hostIP}}
	}
	if v.podIP != "" {
		st.PodIP = v.podIP
		st.PodIPs = []corev1.PodIP{{IP: v.podIP}}
	}
	for _, c := range v.initContainers {
		st.InitContainerStatuses = append(st.InitContainerStatuses, c.status())
	}
	allReady := len(v.containers) > 0
	for _, c := range v.containers {
		st.ContainerStatuses = append(st.ContainerStatuses, c.status())
		allReady = allReady && c.ready
	}

	terminal := st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed
	cond := func(t corev1.PodConditionType, ok bool, reason string) corev1.PodCondition {
		c := corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: now,
			ObservedGeneration: v.pod.Generation}
		if ok {
			c.Status = corev1.ConditionTrue
			c.Reason = ""
		}
		return c
	}
	ready := allReady && !terminal && readinessGatesPass(v.pod)
	containersReadyReason, readyReason := "ContainersNotReady", "ContainersNotReady"
	if terminal {
		containersReadyReason, readyReason = "PodCompleted", "PodCompleted"
	} else if allReady && !ready {
		readyReason = "ReadinessGatesNotReady"
	}
	initReason := "ContainersNotInitialized"
	if terminal && v.initDone {
		initReason = "PodCompleted"
	}
	conds := []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, v.sandboxReady && !terminal, ""),
		cond(corev1.PodInitialized, v.initDone, initReason),
		cond(corev1.ContainersReady, allReady && !terminal, containersReadyReason),
		cond(corev1.PodReady, ready, readyReason),
	}
	// Keep the conditions that others own (PodScheduled, readiness gates…).
	mine := map[corev1.PodConditionType]bool{}
	for _, c := range conds {
		mine[c.Type] = true
	}
	for _, c := range v.pod.Status.Conditions {
		if !mine[c.Type] {
			conds = append(conds, c)
		}
	}
	if prev != nil {
		for i := range conds {
			for _, p := range prev.Conditions {
				if p.Type == conds[i].Type && p.Status == conds[i].Status {
					conds[i].LastTransitionTime = p.LastTransitionTime
				}
			}
		}
	}
	st.Conditions = conds
	return st
}

// podPhase follows the kubelet's rules: Pending until the containers have
// started, Running while any runs or will be restarted, then Succeeded or
// Failed by the exit codes.
func podPhase(v podView) corev1.PodPhase {
	if v.initFailed {
		return corev1.PodFailed
	}
	if !v.initDone {
		return corev1.PodPending
	}
	var started, running, alive, failed int
	for _, c := range v.containers {
		if c.everStarted {
			started++
		}
		switch {
		case c.state.Running != nil:
			running++
			alive++
		case c.state.Waiting != nil:
			if c.willRestart || !c.everStarted {
				alive++
			}
			if c.lastState.Terminated != nil && c.lastState.Terminated.ExitCode != 0 {
				failed++
			}
		case c.state.Terminated != nil:
			if c.willRestart {
				alive++
			} else if c.state.Terminated.ExitCode != 0 {
				failed++
			}
		}
	}
	switch {
	case started == 0:
		return corev1.PodPending
	case alive > 0:
		return corev1.PodRunning
	case failed > 0:
		return corev1.PodFailed
	}
	return corev1.PodSucceeded
}

func readinessGatesPass(p *corev1.Pod) bool {
	for _, g := range p.Spec.ReadinessGates {
		ok := false
		for _, c := range p.Status.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
