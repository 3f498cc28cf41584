package kafka

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
)

// kcat runs kcat (librdkafka; .ci/run installs the Debian package) with
// args and stdin, and returns its standard output.
func kcat(t *testing.T, ctx context.Context, stdin string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is not installed (apt-get install -y kcat; .ci/run does): %v", err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// TestKcat: kcat lists the cluster's metadata, produces lines and consumes
// them back with their partitions and offsets, and again as a balanced
// consumer of a group (-G) whose commits the HTTP API shows, through the
// Kafka listener of three brokers and through one broker's gateway; the
// HTTP API reads the same records.
func TestKcat(t *testing.T) {
	c := startCluster(t, 3, nil)
	for name, bootstrap := range map[string]string{"kafka": c.KafkaAddress(0), "gateway": c.GatewayAddress(1)} {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t, 30*time.Second)
			topic := "kcat-" + name
			if _, err := c.Client(0).CreateTopic(ctx, api.CreateTopicRequest{Name: topic, Partitions: 3, ReplicationFactor: 3}); err != nil {
				t.Fatal(err)
			}
			var meta struct {
				Brokers []struct {
					ID   int32  `json:"id"`
					Name string `json:"name"`
				} `json:"brokers"`
				Topics []struct {
					Topic      string `json:"topic"`
					Partitions []struct {
						Partition int32 `json:"partition"`
						Leader    int32 `json:"leader"`
					} `json:"partitions"`
				} `json:"topics"`
			}
			// librdkafka may see the topic a moment after the controller
			// created it, on another broker.
			for found := false; !found; {
				out := kcat(t, ctx, "", "-b", bootstrap, "-L", "-J", "-t", topic)
				if err := json.Unmarshal([]byte(out), &meta); err != nil {
					t.Fatalf("kcat -L -J: %v\n%s", err, out)
				}
				found = len(meta.Topics) == 1 && len(meta.Topics[0].Partitions) == 3
				if !found && ctx.Err() != nil {
					t.Fatalf("kcat -L never showed %s with 3 partitions: %s", topic, out)
				}
			}
			wantBrokers := 3
			if name == "gateway" {
				wantBrokers = 1 // the gateway names itself alone
			}
			if len(meta.Brokers) != wantBrokers {
				t.Fatalf("kcat -L lists brokers %+v, want %d", meta.Brokers, wantBrokers)
			}

			var lines []string
			for i := 0; i < 50; i++ {
				lines = append(lines, fmt.Sprintf("k%d:line-%d", i%7, i))
			}
			kcat(t, ctx, strings.Join(lines, "\n")+"\n", "-b", bootstrap, "-P", "-t", topic, "-K", ":",
				"-X", "acks=all")

			out := kcat(t, ctx, "", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q",
				"-f", "%p %o %k %s\n")
			got := strings.Split(strings.TrimSpace(out), "\n")
			if len(got) != len(lines) {
				t.Fatalf("kcat consumed %d lines, produced %d:\n%s", len(got), len(lines), out)
			}
			var values []string
			keyPartition := map[string]string{}
			for _, l := range got {
				var p, o int64
				var k, v string
				if _, err := fmt.Sscanf(l, "%d %d %s %s", &p, &o, &k, &v); err != nil {
					t.Fatalf("kcat line %q: %v", l, err)
				}
				if prev, ok := keyPartition[k]; ok && prev != fmt.Sprint(p) {
					t.Fatalf("key %s in partitions %s and %d", k, prev, p)
				}
				keyPartition[k] = fmt.Sprint(p)
				values = append(values, k+":"+v)
				// The HTTP API has the same record at the same offset.
				if o == 0 {
					hf, err := c.Client(2).Fetch(ctx, client.FetchRequest{Topic: topic, Partition: int32(p), Offset: 0, MaxRecords: 1})
					if err != nil {
						t.Fatal(err)
					}
					if len(hf.Records) != 1 || hf.Records[0].Message != v {
						t.Fatalf("HTTP fetch of %d/0: %+v, kcat read %s", p, hf.Records, v)
					}
				}
			}
			sort.Strings(values)
			sort.Strings(lines)
			if strings.Join(values, ",") != strings.Join(lines, ",") {
				t.Fatalf("kcat consumed %v, produced %v", values, lines)
			}

			// -G: a balanced consumer in a group, which commits what it
			// read when it leaves; the HTTP API shows the commits.
			group := "kcat-group-" + name
			out = kcat(t, ctx, "", "-b", bootstrap, "-G", group, "-o", "beginning", "-e", "-q",
				"-f", "%s\n", topic)
			if got := strings.Split(strings.TrimSpace(out), "\n"); len(got) != len(lines) {
				t.Fatalf("kcat -G consumed %d lines, produced %d:\n%s", len(got), len(lines), out)
			}
			d, err := c.Client(1).DescribeGroup(ctx, group, topic)
			if err != nil {
				t.Fatal(err)
			}
			var committed int64
			for _, o := range d.Offsets {
				committed += max(o.CommittedOffset, 0)
			}
			if committed != int64(len(lines)) || d.TotalLag != 0 {
				t.Fatalf("after kcat -G, the group has committed %d of %d (lag %d): %+v", committed, len(lines), d.TotalLag, d.Offsets)
			}
		})
	}
}
