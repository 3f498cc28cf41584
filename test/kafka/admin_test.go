package kafka

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kairolog/kairolog/broker/api"
)

// TestTopicAdministration: kadm creates, grows and deletes topics on three
// brokers, through the Kafka listener and through the gateway; the HTTP
// API sees each change, and what cannot be done is answered with Kafka's
// error codes.
func TestTopicAdministration(t *testing.T) {
	c := startCluster(t, 3, nil)
	for name, seeds := range map[string][]string{"kafka": c.KafkaAddresses(), "gateway": {c.GatewayAddress(2)}} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t, 60*time.Second)
			adm := kadm.NewClient(newClient(t, seeds))
			topic := "admin-" + name

			created, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"retention.ms": kadmString("3600000")}, topic)
			if err != nil || created.Err != nil {
				t.Fatalf("create: %v %v", err, created.Err)
			}
			if created.ID == (kadm.TopicID{}) || created.NumPartitions != 2 || created.ReplicationFactor != 3 {
				t.Fatalf("create answered %+v", created)
			}
			// Broker 1 learns of the topic from the metadata log, maybe a
			// moment after the controller answered.
			desc, err := c.Client(1).DescribeTopic(ctx, topic)
			for api.IsCode(err, api.CodeUnknownTopic) && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
				desc, err = c.Client(1).DescribeTopic(ctx, topic)
			}
			if err != nil {
				t.Fatal(err)
			}
			if desc.PartitionCount != 2 || desc.ReplicationFactor != 3 || desc.Config["retention.ms"] != "3600000" ||
				desc.TopicID != uuid.UUID(created.ID).String() {
				t.Fatalf("HTTP describes %+v, Kafka created %+v", desc, created)
			}

			// kadm's CreateTopic returns the topic's error as its own too.
			again, err := adm.CreateTopic(ctx, 1, 1, nil, topic)
			if !errors.Is(again.Err, kerr.TopicAlreadyExists) {
				t.Fatalf("create again: %v %v", err, again.Err)
			}
			tooMany, err := adm.CreateTopic(ctx, 1, 4, nil, topic+"-rf4")
			if !errors.Is(tooMany.Err, kerr.InvalidReplicationFactor) {
				t.Fatalf("create at RF 4 on 3 brokers: %v %v", err, tooMany.Err)
			}

			grown, err := adm.UpdatePartitions(ctx, 5, topic)
			if err != nil || grown.Error() != nil {
				t.Fatalf("grow to 5: %v %v", err, grown.Error())
			}
			desc, err = c.Client(0).DescribeTopic(ctx, topic)
			for err == nil && desc.PartitionCount != 5 && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
				desc, err = c.Client(0).DescribeTopic(ctx, topic)
			}
			if err != nil || desc.PartitionCount != 5 {
				t.Fatalf("after growing, HTTP describes %+v (%v)", desc, err)
			}
			shrunk, err := adm.UpdatePartitions(ctx, 3, topic)
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := shrunk.On(topic, nil); r.Err != kerr.InvalidPartitions {
				t.Fatalf("shrink to 3: %v", r.Err)
			}

			deleted, err := adm.DeleteTopics(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := deleted.On(topic, nil); r.Err != nil {
				t.Fatalf("delete: %v", r.Err)
			}
			// Every broker drops the topic: a delete sent again to one that
			// still knew it would name its id, and succeed.
			for i := 0; i < 3; i++ {
				_, err = c.Client(i).DescribeTopic(ctx, topic)
				for err == nil && ctx.Err() == nil {
					time.Sleep(50 * time.Millisecond)
					_, err = c.Client(i).DescribeTopic(ctx, topic)
				}
				if !api.IsCode(err, api.CodeUnknownTopic) {
					t.Fatalf("broker %d's HTTP API describes the deleted topic: %v", i, err)
				}
			}
			deleted, err = adm.DeleteTopics(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := deleted.On(topic, nil); r.Err != kerr.UnknownTopicOrPartition {
				t.Fatalf("delete again: %v", r.Err)
			}
		})
	}
}

// TestIdempotentProducerGetsAnID: kgo's default producer is idempotent;
// it asks InitProducerId for an id and gets a fresh one per client.
func TestIdempotentProducerGetsAnID(t *testing.T) {
	c := startCluster(t, 1, nil)
	ctx := testContext(t, 60*time.Second)
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: "idempotent", Partitions: 1, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for i := 0; i < 2; i++ {
		cl := newClient(t, c.KafkaAddresses(), kgo.DefaultProduceTopic("idempotent"))
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		id, epoch, err := cl.ProducerID(ctx)
		if err != nil || id < 0 || epoch != 0 || ids[id] {
			t.Fatalf("producer %d: id %d epoch %d (%v); ids so far %v", i, id, epoch, err, ids)
		}
		ids[id] = true
	}
}

func kadmString(s string) *string { return &s }

// TestTopicConfigsAndCluster: kadm describes a topic's configs (overrides
// as dynamic, the rest as defaults) and alters them incrementally and as a
// whole (the AlterConfigs of older clients), which the HTTP API sees; a bad
// value is INVALID_CONFIG and changes nothing;
// DescribeCluster names the three brokers and the controller.
func TestTopicConfigsAndCluster(t *testing.T) {
	c := startCluster(t, 3, nil)
	ctx := testContext(t, 60*time.Second)
	const topic = "configured"
	if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 1, ReplicationFactor: 3,
		Config: map[string]string{"retention.ms": "3600000"}}); err != nil {
		t.Fatal(err)
	}
	cl := newClient(t, c.KafkaAddresses())
	adm := kadm.NewClient(cl)
	describe := func() map[string]kadm.Config {
		t.Helper()
		// The topic was created through broker 0; the broker kadm asks may
		// learn of it a moment later.
		var rc kadm.ResourceConfig
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			rcs, derr := adm.DescribeTopicConfigs(ctx, topic)
			if derr != nil {
				t.Fatal(derr)
			}
			rc, err = rcs.On(topic, nil)
			if err != nil || !errors.Is(rc.Err, kerr.UnknownTopicOrPartition) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || rc.Err != nil {
			t.Fatalf("describe configs: %v %v", err, rc.Err)
		}
		out := map[string]kadm.Config{}
		for _, cfg := range rc.Configs {
			out[cfg.Key] = cfg
		}
		return out
	}
	cfgs := describe()
	if r := cfgs["retention.ms"]; r.MaybeValue() != "3600000" || r.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms: %+v", r)
	}
	if s := cfgs["segment.bytes"]; s.MaybeValue() != "1073741824" || s.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("segment.bytes: %+v", s)
	}

	altered, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadmString("2000000")},
		{Op: kadm.DeleteConfig, Name: "retention.ms"},
	}, topic)
	if err != nil || altered[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, altered)
	}
	desc, err := c.Client(0).DescribeTopic(ctx, topic)
	for err == nil && desc.Config["max.message.bytes"] != "2000000" && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		desc, err = c.Client(0).DescribeTopic(ctx, topic)
	}
	if err != nil || desc.Config["max.message.bytes"] != "2000000" || desc.Config["retention.ms"] != "" {
		t.Fatalf("after altering, HTTP describes %v (%v)", desc.Config, err)
	}
	bad, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: kadmString("12")}}, topic)
	if err != nil || !errors.Is(bad[0].Err, kerr.InvalidConfig) {
		t.Fatalf("segment.bytes=12: %v %+v", err, bad)
	}
	if got := describe()["segment.bytes"]; got.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("a refused change changed segment.bytes: %+v", got)
	}

	// The AlterConfigs of older clients replaces every override:
	// max.message.bytes, set above and left out here, goes back to its
	// default, and a config without a value is left out.
	replaced, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{
		{Name: "retention.ms", Value: kadmString("7200000")},
		{Name: "segment.ms"},
	}, topic)
	if err != nil || replaced[0].Err != nil {
		t.Fatalf("alter the whole state: %v %+v", err, replaced)
	}
	desc, err = c.Client(0).DescribeTopic(ctx, topic)
	for err == nil && desc.Config["retention.ms"] != "7200000" && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		desc, err = c.Client(0).DescribeTopic(ctx, topic)
	}
	if err != nil || len(desc.Config) != 1 || desc.Config["retention.ms"] != "7200000" {
		t.Fatalf("after replacing, HTTP describes %v (%v)", desc.Config, err)
	}
	// The broker kadm asks may learn of the change a moment later.
	m := describe()["max.message.bytes"]
	for deadline := time.Now().Add(10 * time.Second); m.Source != kmsg.ConfigSourceDefaultConfig && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		m = describe()["max.message.bytes"]
	}
	if m.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("max.message.bytes after replacing: %+v", m)
	}
	legacy := func(rtype kmsg.ConfigResourceType, name string, validate bool, kv ...string) int16 {
		t.Helper()
		req := kmsg.NewPtrAlterConfigsRequest()
		req.ValidateOnly = validate
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = rtype, name
		for i := 0; i < len(kv); i += 2 {
			cfg := kmsg.NewAlterConfigsRequestResourceConfig()
			cfg.Name, cfg.Value = kv[i], kadmString(kv[i+1])
			res.Configs = append(res.Configs, cfg)
		}
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || len(resp.Resources) != 1 {
			t.Fatalf("AlterConfigs %s: %v %+v", name, err, resp)
		}
		return resp.Resources[0].ErrorCode
	}
	for _, tc := range []struct {
		what     string
		rtype    kmsg.ConfigResourceType
		name     string
		validate bool
		kv       []string
		want     *kerr.Error
	}{
		{"a bad value", kmsg.ConfigResourceTypeTopic, topic, false, []string{"segment.bytes", "12"}, kerr.InvalidConfig},
		{"a config named twice", kmsg.ConfigResourceTypeTopic, topic, false, []string{"retention.ms", "1", "retention.ms", "2"}, kerr.InvalidRequest},
		{"validate_only", kmsg.ConfigResourceTypeTopic, topic, true, []string{"retention.ms", "1"}, kerr.InvalidRequest},
		{"a broker", kmsg.ConfigResourceTypeBroker, "0", false, []string{"log.retention.ms", "1"}, kerr.InvalidRequest},
		{"an unknown topic", kmsg.ConfigResourceTypeTopic, "no-such-topic", false, []string{"retention.ms", "1"}, kerr.UnknownTopicOrPartition},
	} {
		if code := legacy(tc.rtype, tc.name, tc.validate, tc.kv...); code != tc.want.Code {
			t.Errorf("AlterConfigs with %s: error %d, want %s", tc.what, code, tc.want.Message)
		}
	}
	if got := describe()["retention.ms"]; got.MaybeValue() != "7200000" {
		t.Fatalf("a refused AlterConfigs changed retention.ms: %+v", got)
	}

	dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
	if err != nil || dc.ErrorCode != 0 {
		t.Fatalf("describe cluster: %v %d", err, dc.ErrorCode)
	}
	meta, err := c.Client(0).Metadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dc.Brokers) != 3 || dc.ClusterID != meta.ClusterID || dc.ControllerID < 0 {
		t.Fatalf("describe cluster: %+v; HTTP metadata %+v", dc, meta)
	}
}
