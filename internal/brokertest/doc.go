// Package brokertest starts real KairoLog brokers for tests outside the
// broker's own packages: as local processes, or in the test's own process
// (StartInProcess), always on ports held from the moment they are picked
// (internal/heldport). It also plays the node that Kubernetes test control
// planes lack.
//
// A Cluster is N broker processes built from cmd/broker, each on its own
// loopback address (127.0.0.x) with ports held for it from the moment they
// are picked (internal/heldport) and a data directory that
// survives restarts, so a restarted broker comes back with its log and its
// metadata quorum state. Cluster.ServiceURL is an HTTP endpoint that behaves
// like the cluster's client Service: it forwards every request to a ready
// broker and fails over when one stops. Point the KairoCluster annotation
// kairolog.io/endpoint-override at it and the operator reaches the brokers as
// it would in a cluster.
//
// A Node stands in for the kubelet (envtest has none): for every Pod of a
// StatefulSet it runs the broker whose id is the pod's ordinal, reports the
// broker's /ready as the pod's Ready condition, stops the broker when the pod
// is deleted and starts it again, on the same data, when the StatefulSet
// controller recreates the pod.
//
//	c, err := brokertest.NewCluster(brokertest.Options{Brokers: 3})
//	defer c.Close()
//	c.StartAll()
//	c.WaitReady(ctx)
//	url := c.ServiceURL()
package brokertest
