package brokertest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// TestClusterRestartsOnItsData runs three brokers, creates a replicated
// topic through the service endpoint, and checks that the endpoint fails
// over while a broker is stopped and that a restarted broker keeps its data
// and rejoins every ISR.
func TestClusterRestartsOnItsData(t *testing.T) {
	if testing.Short() {
		t.Skip("runs broker processes")
	}
	c, err := NewCluster(Options{Brokers: 3, Config: map[string]string{"min.insync.replicas": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	svc := c.ServiceClient()
	if _, err := svc.CreateTopic(ctx, api.CreateTopicRequest{Name: "orders", Partitions: 3, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	waitInSync := func(want int) {
		t.Helper()
		for {
			brokers, err := svc.Brokers(ctx)
			n := 0
			for _, b := range brokers {
				if b.InSync && b.State == api.BrokerAlive && b.Partitions >= 3 { // __consumer_offsets adds its own
					n++
				}
			}
			if err == nil && n == want {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("waiting for %d in-sync brokers: %v %+v", want, err, brokers)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitInSync(3)

	if err := c.Stop(1); err != nil {
		t.Fatal(err)
	}
	if c.Running(1) || c.Ready(1) {
		t.Fatal("broker 1 still running after Stop")
	}
	// Its ports stay held for its restart (bound by this process, so the
	// kernel gives them to no one else's port 0), and a caller is refused
	// as by any closed port.
	p := c.broker(1)
	p.mu.Lock()
	held := len(p.held)
	p.mu.Unlock()
	if held != len(p.addresses()) {
		t.Fatalf("stopped broker 1 holds %d of its %d ports", held, len(p.addresses()))
	}
	for _, addr := range p.addresses() {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			t.Fatalf("stopped broker 1's address %s accepted a connection", addr)
		}
	}
	for k := 0; k < 6; k++ { // every request reaches a running broker
		if _, err := svc.Metadata(ctx); err != nil {
			t.Fatalf("service endpoint with broker 1 down: %v", err)
		}
	}
	if err := c.Start(1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitReady(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitInSync(3)
	d, err := c.Client(1).DescribeTopic(ctx, "orders")
	if err != nil || d.PartitionCount != 3 {
		t.Fatalf("broker 1 after restart: %+v, %v", d, err)
	}
}
