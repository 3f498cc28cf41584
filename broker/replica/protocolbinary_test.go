package replica

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/peer"
)

func sampleSessionRequest() sessionRequest {
	return sessionRequest{ReplicaID: 2, SessionID: 7, SessionEpoch: 41, WaitMs: 500, MaxBytes: 10 << 20,
		Partitions: []sessionPartitionRequest{
			{Topic: "orders", TopicID: "5b0c8f6e-0e5e-4a8e-9a51-7b1f2c3d4e5f", Partition: 3, LeaderEpoch: 9, FetchOffset: 1 << 40, LastFetchedEpoch: 8, MaxBytes: 1 << 20},
			{Topic: "ü-topic", Partition: 0, LeaderEpoch: -1, FetchOffset: 0, LastFetchedEpoch: -1},
		},
		Forgotten: []topicPartition{{Topic: "gone", Partition: 11}},
	}
}

func sampleSessionReply() sessionReply {
	hw, leader := int64(12), int32(1)
	return sessionReply{SessionID: 7,
		Partitions: []sessionPartitionReply{
			{Topic: "orders", Partition: 3, HighWatermark: 100, LogStartOffset: 5, LogEndOffset: 103, Bytes: 4},
			{Topic: "orders", Partition: 4, Error: &api.ErrorBody{Error: "not the leader", Code: api.CodeNotLeader, Leader: &leader, HighWatermark: &hw}},
			{Topic: "orders", Partition: 5, Diverging: &epochEndOffset{Epoch: 3, EndOffset: 77}},
			{Topic: "logs", Partition: 0, HighWatermark: 9, LogEndOffset: 9, Bytes: 2},
		},
		Batches: []byte("\x00\x01\x02\xff\x10\x11"),
	}
}

// TestSessionBinaryMatchesJSON: the binary encodings of a session request
// and reply decode to what their JSON (and payload) decodes to.
func TestSessionBinaryMatchesJSON(t *testing.T) {
	req := sampleSessionRequest()
	var viaBinary, viaJSON sessionRequest
	if err := viaBinary.DecodePeerBinary(peer.BinaryBody(&req)); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(req)
	if err := json.Unmarshal(js, &viaJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaBinary, viaJSON) || !reflect.DeepEqual(viaBinary, req) {
		t.Fatalf("request:\nbinary %+v\njson   %+v", viaBinary, viaJSON)
	}

	reply := sampleSessionReply()
	var replyBinary, replyJSON sessionReply
	if err := replyBinary.DecodePeerBinary(peer.BinaryBody(&reply)); err != nil {
		t.Fatal(err)
	}
	js, _ = json.Marshal(reply)
	if err := json.Unmarshal(js, &replyJSON); err != nil {
		t.Fatal(err)
	}
	replyJSON.Batches = reply.Batches
	if !reflect.DeepEqual(replyBinary, replyJSON) || !reflect.DeepEqual(replyBinary, reply) {
		t.Fatalf("reply:\nbinary %+v\njson   %+v", replyBinary, replyJSON)
	}

	// An empty session request and reply (an idle long poll) are a few
	// dozen bytes, fewer than their JSON.
	for _, m := range []interface {
		AppendPeerBinary([]byte) []byte
	}{&sessionRequest{ReplicaID: 1, SessionID: 3, SessionEpoch: 2, WaitMs: 500, MaxBytes: 10 << 20}, &sessionReply{SessionID: 3}} {
		js, _ := json.Marshal(m)
		if n := len(m.AppendPeerBinary(nil)); n > 40 || n >= len(js) {
			t.Fatalf("%T idle: %d bytes, JSON %d", m, n, len(js))
		}
	}
}

// TestSessionBinaryRefusals: a session message of another version, cut
// short, with bytes left over or a count its bytes cannot hold is an
// error.
func TestSessionBinaryRefusals(t *testing.T) {
	full := sampleSessionRequest()
	raw := peer.BinaryBody(&full)
	cases := map[string][]byte{
		"empty":         nil,
		"other version": append([]byte{1}, raw[1:]...),
		"cut short":     raw[:len(raw)-3],
		"left over":     append(append([]byte(nil), raw...), 0),
		// 2^31-1 partitions in a few bytes.
		"huge count":     append(append([]byte(nil), raw[:1+4+4+4+8+8]...), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0),
		"negative count": append(append([]byte(nil), raw[:1+4+4+4+8+8]...), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0),
	}
	for name, b := range cases {
		var r sessionRequest
		if err := r.DecodePeerBinary(b); err == nil {
			t.Errorf("%s: decoded as %+v", name, r)
		}
	}
	reply := sampleSessionReply()
	rraw := peer.BinaryBody(&reply)
	var r sessionReply
	bad := append([]byte(nil), rraw[:1+4+4+1+len("orders")+4]...)
	if err := r.DecodePeerBinary(append(bad, 9)); err == nil {
		t.Errorf("an entry of unknown kind decoded as %+v", r)
	}
}

// FuzzSessionBinary feeds arbitrary bytes to the session decoders: a
// leader's or follower's bytes are never trusted, so they fail with an
// error, never panic; what decodes encodes back to a message that decodes
// the same.
func FuzzSessionBinary(f *testing.F) {
	req, reply := sampleSessionRequest(), sampleSessionReply()
	f.Add(peer.BinaryBody(&req))
	f.Add(peer.BinaryBody(&reply))
	f.Add([]byte{0, 0, 0, 0, 7, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var q sessionRequest
		if q.DecodePeerBinary(raw) == nil {
			var again sessionRequest
			if err := again.DecodePeerBinary(peer.BinaryBody(&q)); err != nil || !reflect.DeepEqual(again, q) {
				t.Fatalf("request %+v re-decodes as %+v, %v", q, again, err)
			}
		}
		var r sessionReply
		if r.DecodePeerBinary(raw) == nil {
			var again sessionReply
			if err := again.DecodePeerBinary(peer.BinaryBody(&r)); err != nil || !reflect.DeepEqual(again, r) {
				t.Fatalf("reply %+v re-decodes as %+v, %v", r, again, err)
			}
		}
	})
}
