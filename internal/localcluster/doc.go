// Package localcluster runs a small, real Kubernetes control plane on this
// machine for the demo and the end-to-end suites: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler from bin/k8s as child processes,
// plus the node agent (package nodeagent) that runs pods as local processes
// and a directory provisioner for PersistentVolumeClaims.
//
// Nothing here is visible to the product: the operator and the brokers see a
// cluster with RBAC, service-account tokens, StatefulSets, bound PVCs,
// Services and DNS-like names, exactly as on kind or a cloud cluster.
//
// Each running cluster owns a "slot" N (an flock under the system temp
// directory), and with it 127.0.N.0/24 for its node and pods and
// 127.1.N.0/24 for its Services, so several clusters can run side by side on
// one machine without sharing an address or a port.
package localcluster
