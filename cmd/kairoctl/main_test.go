package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/config"
	"github.com/kairolog/kairolog/internal/brokertest"
)

// startBroker runs a real single-node broker in-process and returns its URL.
func startBroker(t *testing.T) string {
	t.Helper()
	s := config.DefaultSettings()
	s.OffsetsTopicNumPartitions = 2
	return brokertest.StartInProcess(t, brokertest.InProcessOptions{Settings: &s})[0].URL
}

// run executes kairoctl with args against url and returns its output.
func run(t *testing.T, url, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"--broker", url}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, url, stdin string, args ...string) string {
	t.Helper()
	out, err := run(t, url, stdin, args...)
	if err != nil {
		t.Fatalf("kairoctl %v: %v\n%s", args, err, out)
	}
	return out
}

func TestKairoctlAgainstBroker(t *testing.T) {
	url := startBroker(t)

	out := mustRun(t, url, "", "topics", "create", "orders", "-p", "3", "-c", "retention.ms=3600000")
	if !strings.Contains(out, "Created topic orders") || !strings.Contains(out, "3 partitions") {
		t.Fatalf("create: %s", out)
	}
	out = mustRun(t, url, "", "topics", "list")
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "orders") || strings.Contains(out, "__consumer_offsets") {
		t.Fatalf("list: %s", out)
	}
	var list struct{ Topics []string }
	decode(t, mustRun(t, url, "", "topics", "list", "-o", "json"), &list)
	if len(list.Topics) != 1 || list.Topics[0] != "orders" {
		t.Fatalf("list json: %+v", list)
	}
	var desc api.TopicDescription
	decode(t, mustRun(t, url, "", "topics", "describe", "orders", "-o", "json"), &desc)
	if desc.PartitionCount != 3 || desc.Config["retention.ms"] != "3600000" {
		t.Fatalf("describe json: %+v", desc)
	}
	if out := mustRun(t, url, "", "topics", "describe", "orders"); !strings.Contains(out, "PARTITION") || !strings.Contains(out, "retention.ms=3600000") {
		t.Fatalf("describe: %s", out)
	}

	// Produce from arguments to a partition, and from stdin with keys.
	out = mustRun(t, url, "", "produce", "orders", "--partition", "0", "first", "second")
	if !strings.Contains(out, "partition 0 offset 0") || !strings.Contains(out, "partition 0 offset 1") {
		t.Fatalf("produce args: %s", out)
	}
	mustRun(t, url, "user-1:hello\nuser-2:world\n", "produce", "orders", "--key-separator", ":", "--batch", "10", "--acks", "all")
	var fetched client.FetchResponse
	decode(t, mustRun(t, url, "", "fetch", "orders", "-p", "0", "-o", "json"), &fetched)
	if len(fetched.Records) < 2 || fetched.Records[0].Message != "first" || fetched.Records[1].Message != "second" {
		t.Fatalf("fetch json: %+v", fetched)
	}
	if out := mustRun(t, url, "", "fetch", "orders", "-p", "0"); !strings.Contains(out, "OFFSET") || !strings.Contains(out, "second") {
		t.Fatalf("fetch: %s", out)
	}

	// A group consumer reads all four records and commits.
	out = mustRun(t, url, "", "consume", "orders", "--group", "workers", "--from-beginning", "--max", "4", "--session-timeout-ms", "3000")
	for _, want := range []string{"first", "second", "hello", "world"} {
		if !strings.Contains(out, want) {
			t.Fatalf("consume missed %q: %s", want, out)
		}
	}
	out = mustRun(t, url, "", "groups", "list")
	if !strings.Contains(out, "workers") {
		t.Fatalf("groups list: %s", out)
	}
	var gd api.GroupDescription
	decode(t, mustRun(t, url, "", "groups", "describe", "workers", "-o", "json"), &gd)
	if gd.TotalLag != 0 || len(gd.Offsets) == 0 || len(gd.Members) != 0 {
		t.Fatalf("describe group after consume and leave: %+v", gd)
	}
	if out := mustRun(t, url, "", "groups", "describe", "workers"); !strings.Contains(out, "COMMITTED") {
		t.Fatalf("groups describe: %s", out)
	}
	out = mustRun(t, url, "", "groups", "reset-offsets", "workers", "--topics", "orders", "--to-earliest")
	if !strings.Contains(out, "NEW-OFFSET") {
		t.Fatalf("reset: %s", out)
	}
	decode(t, mustRun(t, url, "", "groups", "describe", "workers", "-o", "json"), &gd)
	if gd.TotalLag != 4 {
		t.Fatalf("lag after reset to earliest = %d, want 4: %+v", gd.TotalLag, gd)
	}
	committedPartitions := func() []int32 {
		var ps []int32
		c, err := client.New(url)
		if err != nil {
			t.Fatal(err)
		}
		offsets, err := c.GroupOffsets(context.Background(), "workers")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range offsets {
			ps = append(ps, o.Partition)
		}
		return ps
	}
	before := committedPartitions()
	if !slices.Contains(before, 0) || len(before) < 2 {
		t.Fatalf("committed before delete-offsets: partitions %v, want 0 and more", before)
	}
	out = mustRun(t, url, "", "groups", "delete-offsets", "workers", "--topic", "orders", "--partitions", "0")
	if !strings.Contains(out, "deleted") {
		t.Fatalf("delete-offsets: %s", out)
	}
	if after := committedPartitions(); slices.Contains(after, 0) || len(after) != len(before)-1 {
		t.Fatalf("committed after deleting partition 0: %v (before %v)", after, before)
	}
	mustRun(t, url, "", "groups", "delete-offsets", "workers", "--topic", "orders")
	if after := committedPartitions(); len(after) != 0 {
		t.Fatalf("committed after deleting every offset of orders: %v", after)
	}
	// With its last offset gone the group is gone, until a consumer
	// commits again.
	if _, err := run(t, url, "", "groups", "delete", "workers"); err == nil || !strings.Contains(err.Error(), "UNKNOWN_GROUP") {
		t.Fatalf("deleting a group without offsets or members: %v, want UNKNOWN_GROUP", err)
	}
	mustRun(t, url, "", "consume", "orders", "--group", "workers", "--from-beginning", "--max", "4", "--session-timeout-ms", "3000")
	mustRun(t, url, "", "groups", "delete", "workers")

	// Delete the first record of partition 0; a deletion past the end
	// keeps every partition's records and fails.
	var deleted struct {
		Partitions []api.RecordsDeletion `json:"partitions"`
	}
	decode(t, mustRun(t, url, "", "topics", "delete-records", "orders", "--partitions", "0", "--before", "1", "-o", "json"), &deleted)
	if len(deleted.Partitions) != 1 || deleted.Partitions[0].LowWatermark == nil || *deleted.Partitions[0].LowWatermark != 1 {
		t.Fatalf("delete-records json: %+v", deleted)
	}
	if out, err := run(t, url, "", "topics", "delete-records", "orders", "--before", "99"); err == nil || !strings.Contains(out, "OFFSET_OUT_OF_RANGE") {
		t.Fatalf("delete-records past the end: %v\n%s", err, out)
	}
	decode(t, mustRun(t, url, "", "topics", "describe", "orders", "-o", "json"), &desc)
	for _, p := range desc.Partitions {
		if want := map[int32]int64{0: 1}[p.Partition]; p.LogStartOffset != want {
			t.Fatalf("partition %d's log start after delete-records: %d, want %d", p.Partition, p.LogStartOffset, want)
		}
	}
	// One broker leads every partition it prefers: nothing to elect.
	if out := mustRun(t, url, "", "topics", "elect-leaders", "orders"); strings.Count(out, "ELECTION_NOT_NEEDED") != len(desc.Partitions) {
		t.Fatalf("elect-leaders on one broker:\n%s", out)
	}
	if out, err := run(t, url, "", "topics", "elect-leaders", "orders", "--partitions", "9"); err == nil || !strings.Contains(out, "UNKNOWN_PARTITION") {
		t.Fatalf("elect-leaders of a partition orders lacks: %v\n%s", err, out)
	}
	// One broker: a partition can only stay where it is, or be refused.
	if out := mustRun(t, url, "", "topics", "reassign", "orders", "--partitions", "0", "--replicas", "0"); !strings.Contains(out, "REPLICAS") {
		t.Fatalf("reassign onto the broker it is on:\n%s", out)
	}
	if out, err := run(t, url, "", "topics", "reassign", "orders", "--partitions", "0", "--replicas", "0,7"); err == nil || !strings.Contains(out, "INVALID_ARGUMENT") {
		t.Fatalf("reassign onto unknown broker 7: %v\n%s", err, out)
	}
	if out, err := run(t, url, "", "topics", "reassign", "orders", "--partitions", "0", "--cancel"); err == nil || !strings.Contains(out, "NO_REASSIGNMENT_IN_PROGRESS") {
		t.Fatalf("cancel with nothing in progress: %v\n%s", err, out)
	}

	var md api.Metadata
	decode(t, mustRun(t, url, "", "cluster", "metadata", "-o", "json"), &md)
	if len(md.Brokers) != 1 || md.ControllerID != 0 {
		t.Fatalf("metadata: %+v", md)
	}
	if out := mustRun(t, url, "", "cluster", "brokers"); !strings.Contains(out, "alive") {
		t.Fatalf("brokers: %s", out)
	}

	// Alter: more partitions, a config change.
	mustRun(t, url, "", "topics", "alter", "orders", "--partitions", "4", "--config", "retention.ms=1000")
	decode(t, mustRun(t, url, "", "topics", "describe", "orders", "-o", "json"), &desc)
	if desc.PartitionCount != 4 || desc.Config["retention.ms"] != "1000" {
		t.Fatalf("after alter: %+v", desc)
	}

	// Errors come back typed.
	_, err := run(t, url, "", "topics", "describe", "nope")
	if !api.IsCode(err, api.CodeUnknownTopic) {
		t.Fatalf("describe nope: %v", err)
	}

	// A tiny bench run prints its summary.
	out = mustRun(t, url, "", "bench", "--records", "200", "--batch", "50", "--concurrency", "2", "--partitions", "2")
	if !strings.Contains(out, "RECORDS/S") || !strings.Contains(out, "consume") {
		t.Fatalf("bench: %s", out)
	}
	mustRun(t, url, "", "topics", "delete", "orders")
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
}
