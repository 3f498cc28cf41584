package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

// TestOversizedRecordRefusedWhileItsLeaderIsAway: a record over the
// topic's max.message.bytes is refused with 413 RECORD_TOO_LARGE by any
// broker, also while the partition's only replica is down. A retriable 503
// there would send a client retrying a request no leader will ever take.
func TestOversizedRecordRefusedWhileItsLeaderIsAway(t *testing.T) {
	c := newTestCluster(t, 3, 3, nil)
	n0 := c.nodes[0]
	n0.expect(t, "POST", "/topics", `{"name":"solo","partitions":1,"replication_factor":1,"config":{"max.message.bytes":"1024"}}`, 201)
	waitTopic(t, c.nodes, "solo", 1)
	leader := int(c.describe(n0, "solo")[0].Leader)
	c.stop(leader)
	other := c.any(leader)

	st, r := produceRaw(t, other, `{"topic":"solo","partition":0,"message":"`+strings.Repeat("x", 2000)+`"}`)
	if st != 413 || r.Code != api.CodeRecordTooLarge {
		t.Fatalf("an oversized record while broker %d, the only replica, is down: %d %+v; want 413 %s", leader, st, r, api.CodeRecordTooLarge)
	}
	// The leader is really away: a record that fits is retriable.
	if st, r := produceRaw(t, other, `{"topic":"solo","partition":0,"message":"small"}`); st != 503 {
		t.Fatalf("a small record while broker %d is down: %d %+v; want a retriable 503", leader, st, r)
	}
}
