// Package e2e is KairoLog's end-to-end suite: the product used the way a
// user uses it, on a real control plane, with real faults.
//
// One local cluster (package internal/localcluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and a node that runs pods as
// processes) serves the whole suite. The operator is installed with the
// helm CLI from charts/kairolog-operator; clusters, topics and consumer
// groups are applied with kubectl; records are produced and fetched over
// HTTP through `kubectl port-forward` to the client Service, and consumed
// with `kairoctl consume --group`. The Go client only reads status and
// events and waits.
//
// The scenarios run in order, each on what the previous one left: install
// the operator, create a three-broker cluster, a topic, produce and fetch,
// consume as a group, SIGKILL a broker under an acks=all producer, change
// the broker configuration under a producer (a rolling restart that must
// never have two brokers down), scale up, down and a refused scale down,
// delete the topic and the cluster, uninstall and delete the namespaces.
// Every acknowledged record is read back at its acknowledged offset.
//
// The suite needs root (pods run in their own namespaces), kubectl, and the
// binaries `make test-e2e` builds: bin/k8s, bin/broker, bin/manager,
// bin/kairoctl and bin/helm. `go test ./...` skips it unless KAIRO_E2E=1:
//
//	make test-e2e
//	KAIRO_E2E=1 go test ./test/e2e/ -v -timeout 20m -ginkgo.v
//
// docs/e2e.md describes what each scenario proves.
package e2e
