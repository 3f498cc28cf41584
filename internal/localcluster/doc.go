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
// directory), and with it a bridge kairo-N whose address 10.244.N.1 is the
// node's (the control plane listens there too, on ports picked free), the
// pod range 10.244.N.0/24 and the Service range 10.96.N.0/24, served by the
// node's service proxy from a network namespace of its own at 10.244.N.254.
// Every pod has its own network namespace on the bridge, so pods bind all
// interfaces as on any cluster, several clusters run side by side on one
// machine, and nothing already listening on the machine, on any port, is in
// their way.
package localcluster
