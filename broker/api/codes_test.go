package api

import (
	"net/http"
	"testing"
)

// TestOneStatusPerCode pins the statuses the wire protocols depend on: a
// code means the same on the client port and between brokers.
func TestOneStatusPerCode(t *testing.T) {
	for code, status := range map[string]int{
		CodeInvalidJSON: 400, CodeInvalidISR: 400, CodeUnauthenticated: 401, CodeInternalTopic: 403,
		CodeUnknownTopic: 404, CodeMethodNotAllowed: 405, CodeFencedLeaderEpoch: 409, CodeNotReplica: 409,
		CodeOffsetOutOfRange: 416, CodeNotLeader: http.StatusMisdirectedRequest, CodeNotController: 503,
		CodeLeaderNotAvailable: 503, CodeInternal: 500, "SOMETHING_NEW": 500,
	} {
		if got := StatusForCode(code); got != status {
			t.Errorf("StatusForCode(%s) = %d, want %d", code, got, status)
		}
	}
	for code, status := range statuses {
		if status < 400 || status > 599 {
			t.Errorf("%s maps to %d, not an error status", code, status)
		}
	}
	e := Errorf(CodeNotLeader, "broker %d leads", 2)
	if e.Status != 421 || e.Error() != "421 NOT_LEADER: broker 2 leads" || e.Retriable() {
		t.Errorf("Errorf: %+v %q", e, e.Error())
	}
	leader := int32(2)
	e.Leader = &leader
	if back := FromBody(e.Status, e.Body()); *back.Leader != 2 || back.Code != CodeNotLeader || back.Message != e.Message {
		t.Errorf("round trip through the body: %+v", back)
	}
}
