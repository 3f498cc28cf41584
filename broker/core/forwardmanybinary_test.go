package core

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

func sampleForwardedProduces() forwardedProduces {
	return forwardedProduces{
		Produces: []forwardedPart{
			{Topic: "orders", Partition: 2, Epoch: 7, Acks: api.AcksAll, Timeout: 30 * time.Second, Count: 3, Bytes: 5},
			{Topic: "ü", Partition: 0, Epoch: -1, Acks: api.AcksLeader, Count: 1, Bytes: 2},
		},
		records: []byte("\x01\x02\x03\x04\x05\xfe\xff"),
	}
}

func sampleProducedEach() producedEach {
	leader := int32(2)
	return producedEach{Produces: []producedPart{
		{Runs: []positionRun{{Partition: 2, Offset: 100, Count: 2}, {Partition: 2, Offset: -1, Count: 1, Code: api.CodeInvalidRecord, Error: "too big"}, {Partition: 2, Offset: 50, Count: 1, Duplicate: true}}},
		{Status: 421, Error: &api.ErrorBody{Error: "moved", Code: api.CodeNotLeader, Leader: &leader}},
	}}
}

// TestForwardedProducesBinaryMatchesJSON: the binary encodings of the
// forwarded produces and their answer decode to what their JSON (and
// payload) decodes to.
func TestForwardedProducesBinaryMatchesJSON(t *testing.T) {
	req := sampleForwardedProduces()
	var viaBinary, viaJSON forwardedProduces
	if err := viaBinary.DecodePeerBinary(peer.BinaryBody(&req)); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(&req)
	if err := json.Unmarshal(js, &viaJSON); err != nil {
		t.Fatal(err)
	}
	viaJSON.records = req.records
	if !reflect.DeepEqual(viaBinary, viaJSON) || !reflect.DeepEqual(viaBinary, req) {
		t.Fatalf("request:\nbinary %+v\njson   %+v", viaBinary, viaJSON)
	}
	answer := sampleProducedEach()
	var answerBinary, answerJSON producedEach
	if err := answerBinary.DecodePeerBinary(peer.BinaryBody(&answer)); err != nil {
		t.Fatal(err)
	}
	js, _ = json.Marshal(&answer)
	if err := json.Unmarshal(js, &answerJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(answerBinary, answerJSON) || !reflect.DeepEqual(answerBinary, answer) {
		t.Fatalf("answer:\nbinary %+v\njson   %+v", answerBinary, answerJSON)
	}
	var bad producedEach
	raw := peer.BinaryBody(&answer)
	if err := bad.DecodePeerBinary(raw[:len(raw)-1]); err == nil {
		t.Fatalf("a cut answer decoded as %+v", bad)
	}
}

// FuzzForwardedProducesBinary feeds arbitrary bytes to the decoders of
// forwarded produces and their answers: errors, never panics, and what
// decodes encodes back to a message that decodes the same.
func FuzzForwardedProducesBinary(f *testing.F) {
	req, answer := sampleForwardedProduces(), sampleProducedEach()
	f.Add(peer.BinaryBody(&req))
	f.Add(peer.BinaryBody(&answer))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var q forwardedProduces
		if q.DecodePeerBinary(raw) == nil {
			var again forwardedProduces
			if err := again.DecodePeerBinary(peer.BinaryBody(&q)); err != nil || !reflect.DeepEqual(again, q) {
				t.Fatalf("request %+v re-decodes as %+v, %v", q, again, err)
			}
		}
		var a producedEach
		if a.DecodePeerBinary(raw) == nil {
			var again producedEach
			if err := again.DecodePeerBinary(peer.BinaryBody(&a)); err != nil || !reflect.DeepEqual(again, a) {
				t.Fatalf("answer %+v re-decodes as %+v, %v", a, again, err)
			}
		}
	})
}
