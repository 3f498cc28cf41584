package kafka

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kairolog/kairolog/internal/brokertest"
)

// startCluster starts n broker processes with props and waits until every
// one is ready. Their logs go to the test's output when it fails.
func startCluster(t testing.TB, n int, props map[string]string) *brokertest.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts broker processes")
	}
	c, err := brokertest.NewCluster(brokertest.Options{Brokers: n, Config: props})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i := 0; i < c.Len(); i++ {
				if b, err := os.ReadFile(c.LogFile(i)); err == nil {
					t.Logf("broker %d log:\n%s", i, tail(b, 60<<10))
				}
			}
		}
		c.Close()
	})
	if err := c.StartAll(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// newClient is a kgo client seeded with addrs, closed with the test.
func newClient(t *testing.T, addrs []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.ClientID("kairolog-test"),
		kgo.RetryTimeout(30 * time.Second)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// testContext is a context for one step of a test.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
