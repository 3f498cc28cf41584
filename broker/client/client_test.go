package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestErrorsAreTyped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/topics/nope":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"topic \"nope\" does not exist","code":"UNKNOWN_TOPIC"}`))
		case "/fetch":
			if r.Header.Get("X-Extra") != "1" {
				t.Errorf("extra header missing")
			}
			w.WriteHeader(416)
			w.Write([]byte(`{"error":"out of range","code":"OFFSET_OUT_OF_RANGE","log_start_offset":3,"high_watermark":9}`))
		default:
			w.WriteHeader(502)
			w.Write([]byte("bad gateway"))
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeTopic(context.Background(), "nope")
	var e *Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != CodeUnknownTopic || !IsCode(err, CodeUnknownTopic) {
		t.Fatalf("got %#v", err)
	}
	fc := c.WithHeader("X-Extra", "1")
	_, err = fc.Fetch(context.Background(), FetchRequest{Topic: "t", Offset: 99})
	if !errors.As(err, &e) || *e.LogStartOffset != 3 || *e.HighWatermark != 9 {
		t.Fatalf("got %#v", err)
	}
	err = c.Health(context.Background())
	if !errors.As(err, &e) || e.Status != 502 || e.Code != CodeBrokerUnavailable || !e.Retriable() {
		t.Fatalf("got %#v", err)
	}
	if _, err := New("ftp://x"); err == nil {
		t.Fatal("ftp accepted")
	}
	if c2, err := New("localhost:8080"); err != nil || c2.Address() != "http://localhost:8080" {
		t.Fatalf("host:port: %v %v", c2, err)
	}
}

func TestStatusForCode(t *testing.T) {
	for code, status := range map[string]int{CodeInvalidJSON: 400, CodeUnknownGroup: 404, CodeMethodNotAllowed: 405,
		CodeNonEmptyGroup: 409, CodeBodyTooLarge: 413, CodeUnsupportedMediaType: 415, CodeOffsetOutOfRange: 416,
		CodeNotEnoughReplicas: 503, "SOMETHING_NEW": 500} {
		if got := StatusForCode(code); got != status {
			t.Errorf("StatusForCode(%s) = %d, want %d", code, got, status)
		}
	}
}

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
