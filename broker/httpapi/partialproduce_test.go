package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/client"
	"github.com/kairolog/kairolog/broker/config"
)

// produceReply is a produce reply, success or failure, as JSON says it.
type produceReply struct {
	Status  string `json:"status"`
	Error   string `json:"error"`
	Code    string `json:"code"`
	Topic   string `json:"topic"`
	Partial bool   `json:"partial"`
	// Partition and Offset: single-record requests.
	Partition *int32 `json:"partition"`
	Offset    *int64 `json:"offset"`
	Records   []struct {
		Partition int32  `json:"partition"`
		Offset    *int64 `json:"offset"`
		Error     string `json:"error"`
		Code      string `json:"code"`
	} `json:"records"`
}

func produceRaw(t *testing.T, n *node, body string) (int, produceReply) {
	t.Helper()
	st, b := n.do(t, "POST", "/produce", body)
	var r produceReply
	if err := json.Unmarshal([]byte(b), &r); err != nil {
		t.Fatalf("produce reply is not JSON: %q", b)
	}
	return st, r
}

// TestProducePartialFailureSaysWhichRecordsAreStored: a batch whose
// partitions fail independently (here one partition's batch is over
// max.message.bytes) stores the others, and the reply says so record by
// record, as Kafka's ProduceResponse does per partition: the stored records
// with their offsets (a client must not send them again), the others with
// their partition's error. The status is the failure's, never a 200 that
// a client checking only the status would take for "all stored".
func TestProducePartialFailureSaysWhichRecordsAreStored(t *testing.T) {
	n := startSingle(t, nodeOptions{})
	n.expect(t, "POST", "/topics", `{"name":"mixed","partitions":2,"config":{"max.message.bytes":"1024"}}`, 201)
	big := strings.Repeat("x", 2000)
	st, r := produceRaw(t, n, `{"topic":"mixed","records":[{"partition":0,"value":"a"},{"partition":1,"value":"`+big+`"},{"partition":0,"value":"b"}]}`)
	if st != 413 || r.Code != api.CodeRecordTooLarge || !r.Partial || r.Topic != "mixed" || len(r.Records) != 3 {
		t.Fatalf("reply %d %+v, want 413 RECORD_TOO_LARGE, partial, three records", st, r)
	}
	if !strings.Contains(r.Error, "2 of 3 records stored") || !strings.Contains(r.Error, "partition 1") {
		t.Errorf("error message %q does not say what was stored and what failed", r.Error)
	}
	for i, want := range []struct {
		partition int32
		offset    int64 // -1: not stored
		code      string
	}{{0, 0, ""}, {1, -1, api.CodeRecordTooLarge}, {0, 1, ""}} {
		got := r.Records[i]
		gotOffset := int64(-1)
		if got.Offset != nil {
			gotOffset = *got.Offset
		}
		if got.Partition != want.partition || gotOffset != want.offset || got.Code != want.code || (want.code != "") != (got.Error != "") {
			t.Errorf("record %d = %+v (offset %d), want partition %d offset %d code %q", i, got, gotOffset, want.partition, want.offset, want.code)
		}
	}
	checkRecords(t, n.expect(t, "GET", "/fetch?topic=mixed&partition=0&offset=0", "", 200),
		`[{"offset":0,"message":"a"},{"offset":1,"message":"b"}]`)
	if got := fetchAll(t, n, "mixed", 1); len(got) != 0 {
		t.Fatalf("partition 1 holds %v, want nothing", got)
	}

	// The Go client hands the same outcome back next to the error.
	c, err := client.New(n.url)
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := int32(0), int32(1)
	resp, err := c.Produce(context.Background(), client.ProduceRequest{Topic: "mixed",
		Records: []client.ProduceRecord{{Partition: &p1, Value: big}, {Partition: &p0, Value: "c"}}})
	if !api.IsCode(err, api.CodeRecordTooLarge) || !resp.Partial || len(resp.Records) != 2 ||
		resp.Records[0].Stored() || resp.Records[0].Code != api.CodeRecordTooLarge ||
		!resp.Records[1].Stored() || resp.Records[1].Offset != 2 || resp.Records[1].Code != "" {
		t.Fatalf("client: %+v, %v", resp, err)
	}

	// A batch that fails as a whole before anything is written keeps the
	// plain error shape.
	st, r = produceRaw(t, n, `{"topic":"mixed","records":[{"partition":0,"value":"a"},{"partition":7,"value":"b"}]}`)
	if st != 404 || r.Code != api.CodeUnknownPartition || r.Records != nil || r.Partial {
		t.Fatalf("unknown partition: %d %+v", st, r)
	}
}

// TestNotEnoughReplicasAfterAppendIsNotNotEnoughReplicas: acks=all with
// min.insync.replicas 3 on three brokers. A follower dies while a batch
// waits for it: once the leader shrinks the ISR the batch is committed on
// two replicas, fewer than asked, and the producer is told
// NOT_ENOUGH_REPLICAS_AFTER_APPEND with the offset where the record is
// (Kafka's error 20) — sending it again would store it twice. The next
// acks=all produce finds the ISR too small before writing anything:
// NOT_ENOUGH_REPLICAS (Kafka's 19), no offset, nothing stored.
func TestNotEnoughReplicasAfterAppendIsNotNotEnoughReplicas(t *testing.T) {
	c := newTestCluster(t, 3, 3, func(s *config.Settings) { s.ReplicaLagTimeMax = time.Second })
	c.nodes[0].expect(t, "POST", "/topics", `{"name":"strict","partitions":1,"replication_factor":3,"config":{"min.insync.replicas":"3"}}`, 201)
	waitTopic(t, c.nodes, "strict", 1)
	c.nodes[0].expect(t, "POST", "/produce", `{"topic":"strict","partition":0,"message":"first","acks":"all"}`, 200)
	leader := c.describe(c.nodes[0], "strict")[0].Leader
	follower := (int(leader) + 1) % 3

	c.crash(follower)
	st, r := produceRaw(t, c.nodes[leader], `{"topic":"strict","partition":0,"message":"second","acks":"all"}`)
	if st != 503 || r.Code != api.CodeNotEnoughReplicasAfterAppend || r.Offset == nil || *r.Offset != 1 || r.Partition == nil || *r.Partition != 0 {
		t.Fatalf("acks=all while the ISR shrinks: %d %+v, want 503 NOT_ENOUGH_REPLICAS_AFTER_APPEND at offset 1", st, r)
	}
	if got := fetchAll(t, c.nodes[leader], "strict", 0); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("after NOT_ENOUGH_REPLICAS_AFTER_APPEND the partition holds %v, want the record committed", got)
	}

	st, r = produceRaw(t, c.nodes[leader], `{"topic":"strict","partition":0,"message":"third","acks":"all"}`)
	if st != 503 || r.Code != api.CodeNotEnoughReplicas || r.Offset != nil {
		t.Fatalf("acks=all with the ISR below the minimum: %d %+v, want 503 NOT_ENOUGH_REPLICAS without an offset", st, r)
	}
	if p := c.describe(c.nodes[leader], "strict")[0]; p.LogEndOffset != 2 {
		t.Fatalf("NOT_ENOUGH_REPLICAS wrote something: log end offset %d, want 2", p.LogEndOffset)
	}
}

// TestProduceAcrossLeadersReportsEachPartition: a batch over partitions led
// by different brokers, one of which cannot take acks=all (its ISR lost a
// broker and is below min.insync.replicas). The partition that can is
// written; the reply, through a broker that proxies the failing partition
// to its leader, says which records are where, and the Go client returns
// that outcome next to the NOT_ENOUGH_REPLICAS error.
func TestProduceAcrossLeadersReportsEachPartition(t *testing.T) {
	c := newTestCluster(t, 3, 3, func(s *config.Settings) { s.ReplicaLagTimeMax = time.Second })
	c.nodes[0].expect(t, "POST", "/topics", `{"name":"spread","partitions":3,"replication_factor":2,"config":{"min.insync.replicas":"2"}}`, 201)
	waitTopic(t, c.nodes, "spread", 3)

	c.crash(2)
	var healthy, hurt int32 = -1, -1
	eventually(t, 20*time.Second, "the partitions on broker 2 to lose it from their ISR", func() bool {
		healthy, hurt = -1, -1
		for _, p := range c.describe(c.nodes[0], "spread") {
			switch {
			case !slices.Contains(p.Replicas, 2) && len(p.ISR) == 2:
				healthy = p.Partition
			case slices.Contains(p.Replicas, 2) && len(p.ISR) == 1 && p.Leader >= 0:
				hurt = p.Partition
			case slices.Contains(p.Replicas, 2):
				return false // still shrinking
			}
		}
		return healthy >= 0 && hurt >= 0
	})
	// Ask the broker that does not lead the failing partition, so that its
	// outcome comes back through the proxy.
	via := c.nodes[0]
	if c.describe(via, "spread")[hurt].Leader == 0 {
		via = c.nodes[1]
	}
	cl, err := client.New(via.url)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cl.Produce(context.Background(), client.ProduceRequest{Topic: "spread", Acks: client.AcksAll,
		Records: []client.ProduceRecord{{Partition: &hurt, Value: "lost"}, {Partition: &healthy, Value: "kept"}, {Partition: &hurt, Value: "lost-too"}}})
	var e *api.Error
	if !api.IsCode(err, api.CodeNotEnoughReplicas) || !asError(err, &e) || e.Status != 503 {
		t.Fatalf("produce: %v, want 503 NOT_ENOUGH_REPLICAS", err)
	}
	if !resp.Partial || len(resp.Records) != 3 {
		t.Fatalf("produce outcome %+v, want three records, partial", resp)
	}
	for i, rec := range resp.Records {
		stored := i == 1
		if rec.Stored() != stored || (rec.Code == api.CodeNotEnoughReplicas) == stored {
			t.Errorf("record %d: %+v, want stored=%v", i, rec, stored)
		}
	}
	if got := fetchAll(t, c.nodes[0], "spread", healthy); !slices.Equal(got, []string{"kept"}) ||
		resp.Records[1].Partition != healthy || resp.Records[1].Offset != 0 {
		t.Fatalf("partition %d holds %v; reply said %+v", healthy, got, resp.Records[1])
	}
	if got := fetchAll(t, c.nodes[0], "spread", hurt); len(got) != 0 {
		t.Fatalf("partition %d holds %v, want nothing", hurt, got)
	}
	if !strings.Contains(e.Message, fmt.Sprintf("partition %d", hurt)) {
		t.Errorf("error %q does not name the failed partition", e.Message)
	}
}

func asError(err error, target **api.Error) bool { return errors.As(err, target) }
