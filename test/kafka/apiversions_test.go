package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestApiVersionsOnEveryListener: each broker process answers ApiVersions
// on its Kafka listener and on its gateway, listing ApiVersions itself.
func TestApiVersionsOnEveryListener(t *testing.T) {
	c := startCluster(t, 1, nil)
	for _, addr := range []string{c.KafkaAddress(0), c.GatewayAddress(0)} {
		cl := newClient(t, []string{addr})
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testContext(t, 10e9), cl)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("%s: error %d", addr, resp.ErrorCode)
		}
		found := false
		for _, k := range resp.ApiKeys {
			found = found || (k.ApiKey == 18 && k.MinVersion == 0)
		}
		if !found {
			t.Fatalf("%s: ApiVersions not listed: %+v", addr, resp.ApiKeys)
		}
	}
}
