package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

func TestErrorsAreTyped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/topics/nope":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"topic \"nope\" does not exist","code":"UNKNOWN_TOPIC"}`))
		case "/fetch":
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
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != api.CodeUnknownTopic || !api.IsCode(err, api.CodeUnknownTopic) {
		t.Fatalf("got %#v", err)
	}
	_, err = c.Fetch(context.Background(), FetchRequest{Topic: "t", Offset: 99})
	if !errors.As(err, &e) || *e.LogStartOffset != 3 || *e.HighWatermark != 9 {
		t.Fatalf("got %#v", err)
	}
	err = c.Health(context.Background())
	if !errors.As(err, &e) || e.Status != 502 || e.Code != api.CodeBrokerUnavailable || !e.Retriable() {
		t.Fatalf("got %#v", err)
	}
	if _, err := New("ftp://x"); err == nil {
		t.Fatal("ftp accepted")
	}
	if c2, err := New("localhost:8080"); err != nil || c2.Address() != "http://localhost:8080" {
		t.Fatalf("host:port: %v %v", c2, err)
	}
}
