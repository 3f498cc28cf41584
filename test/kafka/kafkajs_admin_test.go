package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// kafkajsAdminResult is what kafkajs/admin.js prints.
type kafkajsAdminResult struct {
	Partitions        int             `json:"partitions"`
	ByTimestamp       []string        `json:"byTimestamp"`
	Set               []kafkajsCommit `json:"set"`
	Reset             []kafkajsCommit `json:"reset"`
	GroupsAfterDelete []string        `json:"groupsAfterDelete"`
	TopicsAfterDelete []string        `json:"topicsAfterDelete"`
}

type kafkajsCommit struct {
	Partition int32  `json:"partition"`
	Offset    string `json:"offset"`
}

// TestKafkaJSAdmin: kafkajs's admin client raises a topic's partitions
// (CreatePartitions) and reads them back (Metadata), finds the offset of a
// timestamp (ListOffsets), sets and resets the offsets of a group without
// members (a consumer it runs for the purpose; resetting to the earliest
// commits -2, which clears the commits) and reads them back (OffsetFetch),
// deletes the group and the topic; each step as kafkajs sees it, and the
// end as the HTTP API sees it.
func TestKafkaJSAdmin(t *testing.T) {
	c := startCluster(t, 3, map[string]string{"group.initial.rebalance.delay.ms": "0"})
	ctx := testContext(t, 120*time.Second)
	const topic, group = "kafkajs-admin", "kafkajs-admin-group"
	var res kafkajsAdminResult
	runNodeScript(t, ctx, "admin.js", &res, "BROKERS="+c.KafkaAddress(0), "TOPIC="+topic, "GROUP="+group)
	t.Logf("kafkajs admin: %+v", res)
	if res.Partitions != 4 {
		t.Errorf("after createPartitions to 4, kafkajs's metadata shows %d partitions", res.Partitions)
	}
	if fmt.Sprint(res.ByTimestamp) != "[1]" {
		t.Errorf("offset of the timestamp between the first and second record: %v, want [1]", res.ByTimestamp)
	}
	if fmt.Sprint(res.Set) != "[{0 2} {1 0} {2 -1} {3 -1}]" {
		t.Errorf("offsets after setOffsets: %v", res.Set)
	}
	if fmt.Sprint(res.Reset) != "[{0 -1} {1 -1} {2 -1} {3 -1}]" {
		t.Errorf("offsets after resetOffsets to the earliest: %v", res.Reset)
	}
	if len(res.GroupsAfterDelete) != 0 || len(res.TopicsAfterDelete) != 0 {
		t.Errorf("after deleting, kafkajs lists the group %v and the topic %v", res.GroupsAfterDelete, res.TopicsAfterDelete)
	}
	hc := c.Client(1)
	if _, err := hc.DescribeTopic(ctx, topic); !api.IsCode(err, api.CodeUnknownTopic) {
		t.Errorf("the HTTP API describes the deleted topic: %v, want UNKNOWN_TOPIC", err)
	}
	if groups, err := hc.ListGroups(ctx); err != nil {
		t.Fatal(err)
	} else {
		for _, g := range groups {
			if g.Group == group {
				t.Errorf("the HTTP API lists the deleted group: %+v", g)
			}
		}
	}
}
