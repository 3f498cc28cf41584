package kafka

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBrokerConfigs: kadm's DescribeBrokerConfigs, as admin tools and
// consoles ask it, shows the settings a broker runs with: those its
// properties file set as STATIC_BROKER_CONFIG, the others their default,
// an unset one without a value, each read-only. Another broker's id is
// INVALID_REQUEST, and the cluster-wide dynamic defaults are none. This
// broker does not authorize, so DescribeAcls is SECURITY_DISABLED, as in
// Kafka without an authorizer.
func TestBrokerConfigs(t *testing.T) {
	c := startCluster(t, 1, map[string]string{"log.retention.ms": "3600000"})
	ctx := testContext(t, 30*time.Second)
	cl := newClient(t, c.KafkaAddresses())
	adm := kadm.NewClient(cl)

	described, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || described[0].Err != nil {
		t.Fatalf("broker 0's configs: %+v", described)
	}
	got := map[string]kadm.Config{}
	for _, cfg := range described[0].Configs {
		got[cfg.Key] = cfg
	}
	for key, want := range map[string]struct {
		value  string
		source kmsg.ConfigSource
	}{
		"log.retention.ms":    {"3600000", kmsg.ConfigSourceStaticBrokerConfig},
		"log.retention.hours": {"1", kmsg.ConfigSourceDefaultConfig},
		"num.partitions":      {"1", kmsg.ConfigSourceDefaultConfig},
		// test clusters set it to 0 (brokertest's properties)
		"group.initial.rebalance.delay.ms": {"0", kmsg.ConfigSourceStaticBrokerConfig},
		"log.flush.interval.messages":      {"", kmsg.ConfigSourceDefaultConfig},
	} {
		cfg, ok := got[key]
		if !ok || cfg.MaybeValue() != want.value || cfg.Source != want.source || (want.value == "") != (cfg.Value == nil) {
			t.Errorf("%s = %q (%v), want %q (%v)", key, cfg.MaybeValue(), cfg.Source, want.value, want.source)
		}
	}

	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, name := range []string{"7", ""} {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Resources) != 2 || resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code ||
		resp.Resources[1].ErrorCode != 0 || len(resp.Resources[1].Configs) != 0 {
		t.Fatalf("broker 7's configs asked of broker 0, and the cluster's dynamic defaults: %+v", resp.Resources)
	}
	if _, err := describeACLRows(t, cl, nil); !errors.Is(err, kerr.SecurityDisabled) {
		t.Fatalf("DescribeAcls without authorization: %v, want SECURITY_DISABLED", err)
	}
}
