package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// kafkajsResult is what kafkajs/roundtrip.js prints.
type kafkajsResult struct {
	Created  bool                `json:"created"`
	Topics   []string            `json:"topics"`
	Plain    []producedPartition `json:"plain"`
	Gzip     []producedPartition `json:"gzip"`
	Consumed []struct {
		Partition int32  `json:"partition"`
		Offset    string `json:"offset"`
		Key       string `json:"key"`
		Value     string `json:"value"`
	} `json:"consumed"`
	Committed []struct {
		Partition int32  `json:"partition"`
		Offset    string `json:"offset"`
	} `json:"committed"`
	Groups    []string `json:"groups"`
	Described struct {
		State        string `json:"state"`
		ProtocolType string `json:"protocolType"`
		Members      int    `json:"members"`
	} `json:"described"`
	Offsets []struct {
		Partition int32  `json:"partition"`
		Low       string `json:"low"`
		High      string `json:"high"`
	} `json:"offsets"`
	Cluster int `json:"cluster"`
	// Retention is retention.ms as describeConfigs read it after
	// alterConfigs set it; LowAfterDelete partition 0's low offset after
	// deleteTopicRecords deleted below 2.
	Retention      string `json:"retention"`
	LowAfterDelete string `json:"lowAfterDelete"`
}

// producedPartition is kafkajs's answer for one partition of a send.
type producedPartition struct {
	Partition int32  `json:"partition"`
	ErrorCode int16  `json:"errorCode"`
	BaseOff   string `json:"baseOffset"`
}

// runKafkaJS runs kafkajs/roundtrip.js under node with env and decodes
// what it prints.
func runKafkaJS(t *testing.T, ctx context.Context, env ...string) kafkajsResult {
	t.Helper()
	var res kafkajsResult
	runNodeScript(t, ctx, "roundtrip.js", &res, env...)
	return res
}

// runNodeScript runs one of the scripts in kafkajs/ under node with env
// and decodes what it prints into out. The node_modules it needs come
// from `npm ci`, which .ci/run runs on a fresh clone.
func runNodeScript(t *testing.T, ctx context.Context, script string, out any, env ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	dir, err := filepath.Abs("kafkajs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kafkajs")); err != nil {
		t.Fatalf("kafkajs is not installed (npm ci --prefix test/kafka/kafkajs; .ci/run does): %v", err)
	}
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("%s wrote to stderr:\n%s", script, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s printed %q: %v\n%s", script, stdout.String(), err, stderr.String())
	}
}

// TestKafkaJS: kafkajs, which sends every request at its own maximum
// version whatever the broker advertises, against three brokers, through
// their Kafka listeners and through one broker's gateway: its admin client
// creates a topic and lists it, its producer writes a plain and a
// gzip-compressed batch with acks -1 and gets their offsets, its consumer
// group reads every record and commits, and the admin client reads the
// commits, the partitions' offsets, the cluster, and lists the group once
// (kafkajs asks every broker and concatenates their answers). The HTTP API
// reads the same records at the same offsets and shows the group's commits.
func TestKafkaJS(t *testing.T) {
	c := startCluster(t, 3, nil)
	for name, bootstrap := range map[string][]string{"kafka": c.KafkaAddresses(), "gateway": {c.GatewayAddress(1)}} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t, 120*time.Second)
			topic, group := "kafkajs-orders-"+name, "kafkajs-billing-"+name
			res := runKafkaJS(t, ctx, "BROKERS="+strings.Join(bootstrap, ","), "TOPIC="+topic, "GROUP="+group)
			checkKafkaJS(t, ctx, c.Client(2), res, topic, group, len(bootstrap))
		})
	}
}

// checkKafkaJS checks what roundtrip.js did against the HTTP API.
func checkKafkaJS(t *testing.T, ctx context.Context, hc *client.Client, res kafkajsResult, topic, group string, brokers int) {
	t.Helper()
	if !res.Created || !slices.Contains(res.Topics, topic) {
		t.Fatalf("kafkajs created %v and lists %v, want %s", res.Created, res.Topics, topic)
	}
	d, err := hc.DescribeTopic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Partitions) != 3 {
		t.Fatalf("HTTP describes %s with %d partitions, kafkajs asked for 3", topic, len(d.Partitions))
	}
	if res.Cluster != brokers {
		t.Fatalf("kafkajs describes a cluster of %d brokers, want %d", res.Cluster, brokers)
	}

	// Two records per partition in each batch: the plain batch is at 0 in
	// every partition and the gzip batch at 2.
	for name, acks := range map[string][]producedPartition{"plain": res.Plain, "gzip": res.Gzip} {
		want := "0"
		if name == "gzip" {
			want = "2"
		}
		if len(acks) != 3 {
			t.Fatalf("%s produce answered %+v, want three partitions", name, acks)
		}
		for _, a := range acks {
			if a.ErrorCode != 0 || a.BaseOff != want {
				t.Fatalf("%s produce to partition %d: error %d, base offset %s, want %s", name, a.Partition, a.ErrorCode, a.BaseOff, want)
			}
		}
	}

	// Every record consumed once, where the producer put it; the HTTP API
	// reads the same record at the same offset.
	if len(res.Consumed) != 12 {
		t.Fatalf("kafkajs consumed %d records, produced 12: %+v", len(res.Consumed), res.Consumed)
	}
	seenValues := map[string]bool{}
	for _, r := range res.Consumed {
		i, _ := strconv.Atoi(r.Value[strings.LastIndexByte(r.Value, '-')+1:])
		wantOffset := strconv.Itoa(i / 3)
		if strings.HasPrefix(r.Value, "gzip-") {
			wantOffset = strconv.Itoa(2 + i/3)
		}
		if seenValues[r.Value] || r.Partition != int32(i%3) || r.Offset != wantOffset {
			t.Fatalf("kafkajs consumed %+v (again: %v), want partition %d offset %s", r, seenValues[r.Value], i%3, wantOffset)
		}
		seenValues[r.Value] = true
		off, _ := strconv.ParseInt(r.Offset, 10, 64)
		hf, err := hc.Fetch(ctx, client.FetchRequest{Topic: topic, Partition: r.Partition, Offset: off, MaxRecords: 1})
		if r.Partition == 0 && off < 2 {
			// Deleted by kafkajs after it consumed them.
			if !api.IsCode(err, api.CodeOffsetOutOfRange) {
				t.Fatalf("HTTP fetch of 0/%d after kafkajs deleted below 2: %+v %v, want OFFSET_OUT_OF_RANGE", off, hf, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(hf.Records) == 0 || hf.Records[0].Offset != off || hf.Records[0].Message != r.Value ||
			hf.Records[0].Key == nil || *hf.Records[0].Key != r.Key {
			t.Fatalf("HTTP fetch of %d/%d: %+v; kafkajs read %s=%s", r.Partition, off, hf.Records, r.Key, r.Value)
		}
	}
	if fmt.Sprint(res.Offsets) != "[{0 0 4} {1 0 4} {2 0 4}]" {
		t.Fatalf("kafkajs fetched partition offsets %+v, want 0 to 4 in every partition", res.Offsets)
	}

	// The commits, as kafkajs and the HTTP API read them, and the group.
	if fmt.Sprint(res.Committed) != "[{0 4} {1 4} {2 4}]" {
		t.Fatalf("kafkajs fetched commits %+v, want 4 in every partition", res.Committed)
	}
	if n := slices.Index(res.Groups, group); n < 0 || slices.Index(res.Groups[n+1:], group) >= 0 {
		t.Fatalf("kafkajs lists groups %v, want %s once", res.Groups, group)
	}
	if res.Described.State != "Empty" || res.Described.ProtocolType != "consumer" || res.Described.Members != 0 {
		t.Fatalf("kafkajs describes the group after its consumer left as %+v", res.Described)
	}
	gd, err := hc.DescribeGroup(ctx, group, topic)
	if err != nil {
		t.Fatal(err)
	}
	if committed(gd) != 12 || gd.TotalLag != 0 {
		t.Fatalf("the HTTP API shows %d committed, lag %d: %+v", committed(gd), gd.TotalLag, gd.Offsets)
	}

	// alterConfigs and deleteTopicRecords, as the HTTP API sees them (the
	// broker asked may learn of the new config a moment after kafkajs).
	d, err = hc.DescribeTopic(ctx, topic)
	for err == nil && d.Config["retention.ms"] != "7200000" && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		d, err = hc.DescribeTopic(ctx, topic)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Retention != "7200000" || d.Config["retention.ms"] != "7200000" {
		t.Fatalf("kafkajs set retention.ms and read %q; the HTTP API describes %v", res.Retention, d.Config)
	}
	if res.LowAfterDelete != "2" || d.Partitions[0].LogStartOffset != 2 {
		t.Fatalf("kafkajs deleted below 2 in partition 0 and reads its low offset %q; the HTTP API describes %+v", res.LowAfterDelete, d.Partitions[0])
	}
}
