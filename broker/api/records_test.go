package api

import (
	"encoding/json"
	"testing"
)

// TestRecordPositionJSON: a record that was not stored has no "offset" on
// the wire and Offset -1 in Go, so that 0 is never mistaken for a position.
func TestRecordPositionJSON(t *testing.T) {
	for _, tc := range []struct {
		pos  RecordPosition
		wire string
	}{
		{RecordPosition{Partition: 1, Offset: 0}, `{"partition":1,"offset":0}`},
		{RecordPosition{Partition: 2, Offset: -1, Error: "no", Code: CodeNotEnoughReplicas}, `{"partition":2,"error":"no","code":"NOT_ENOUGH_REPLICAS"}`},
		{RecordPosition{Partition: 0, Offset: 9, Error: "few", Code: CodeNotEnoughReplicasAfterAppend}, `{"partition":0,"offset":9,"error":"few","code":"NOT_ENOUGH_REPLICAS_AFTER_APPEND"}`},
	} {
		b, err := json.Marshal(tc.pos)
		if err != nil || string(b) != tc.wire {
			t.Errorf("marshal %+v = %s, %v; want %s", tc.pos, b, err, tc.wire)
		}
		var back RecordPosition
		if err := json.Unmarshal([]byte(tc.wire), &back); err != nil || back != tc.pos {
			t.Errorf("unmarshal %s = %+v, %v; want %+v", tc.wire, back, err, tc.pos)
		}
		if back.Stored() != (tc.pos.Offset >= 0) {
			t.Errorf("%+v: Stored() = %v", back, back.Stored())
		}
	}
}
