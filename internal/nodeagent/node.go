package nodeagent

import (
	"net"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node reports a generous, fixed capacity: pods are processes on a
// development machine, and the scheduler should place whatever a chart asks
// for rather than leave it Pending over a request sized for a cloud VM.
const (
	nodeCPU              = "32"
	nodeMemory           = "128Gi"
	nodeEphemeralStorage = "500Gi"
	nodePods             = "250"

	// KubeletVersion is what the node reports as its kubelet version: the
	// control plane's version, marked as this node agent.
	KubeletVersion = "v1.37.2-kairo-local"
)

// nodeObject is the Node this agent registers and keeps Ready.
func nodeObject(name string, ip net.IP, podCIDR *net.IPNet, kubeletPort int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(nodeCPU),
		corev1.ResourceMemory:           resource.MustParse(nodeMemory),
		corev1.ResourceEphemeralStorage: resource.MustParse(nodeEphemeralStorage),
		corev1.ResourcePods:             resource.MustParse(nodePods),
	}
	now := metav1.NewTime(time.Now())
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   runtime.GOOS,
				corev1.LabelArchStable: runtime.GOARCH,
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: podCIDR.String(), PodCIDRs: []string{podCIDR.String()}},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity,
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{
				condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kairo-local node agent is posting ready status"),
				condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: ip.String()},
				{Type: corev1.NodeHostName, Address: name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem:         runtime.GOOS,
				Architecture:            runtime.GOARCH,
				KubeletVersion:          KubeletVersion,
				ContainerRuntimeVersion: "kairo-local://process",
				OSImage:                 "local processes",
			},
		},
	}
}
