package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/internal/heldport"
)

type echoReq struct {
	Text string `json:"text"`
	Fail string `json:"fail,omitempty"`
}

type echoResp struct {
	Text      string `json:"text"`
	Forwarded bool   `json:"forwarded"`
	Epoch     *int32 `json:"epoch,omitempty"`
}

type batchResp struct {
	HighWatermark int64  `json:"high_watermark"`
	Batches       []byte `json:"-"`
}

func (r *batchResp) PeerPayload() []byte     { return r.Batches }
func (r *batchResp) SetPeerPayload(b []byte) { r.Batches = b }

// payloadReq is a request that carries raw bytes, as a forwarded produce
// carries its records.
type payloadReq struct {
	Count   int    `json:"count"`
	Records []byte `json:"-"`
}

func (r *payloadReq) PeerPayload() []byte     { return r.Records }
func (r *payloadReq) SetPeerPayload(b []byte) { r.Records = b }

var (
	opEcho    = NewOp[echoReq, echoResp]("test/echo")
	opBatch   = NewOp[echoReq, batchResp]("test/batch")
	opPayload = NewOp[payloadReq, batchResp]("test/payload")
	// opEchoFramed is opEcho's path with a request that carries a
	// payload: a frame sent to an operation that expects none.
	opEchoFramed = NewOp[payloadReq, echoResp]("test/echo")
)

func testSecret(t *testing.T, s string) Secret {
	t.Helper()
	sec, err := NewSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// startPeer serves a Mux with the test operations, and peer streams in
// front of it.
func startPeer(t testing.TB, secret Secret) string {
	t.Helper()
	m := testMux(secret)
	streams := NewStreamServer(secret, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(streams)
	t.Cleanup(func() {
		streams.Close()
		srv.Close()
	})
	return strings.TrimPrefix(srv.URL, "http://")
}

// startHTTPOnlyPeer serves the test operations without streams, as a
// broker from before them.
func startHTTPOnlyPeer(t testing.TB, secret Secret) (addr string, m *Mux) {
	t.Helper()
	m = testMux(secret)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), m
}

// testMux is a Mux with the test operations.
func testMux(secret Secret) *Mux {
	m := NewMux(secret, slog.New(slog.NewTextHandler(io.Discard, nil)))
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) {
		switch req.Fail {
		case "not-leader":
			leader, epoch := int32(2), int32(7)
			e := api.Errorf(api.CodeNotLeader, "broker 2 leads")
			e.Leader, e.LeaderEpoch = &leader, &epoch
			return echoResp{}, fmt.Errorf("wrapped: %w", e)
		case "bug":
			return echoResp{}, errors.New("no code for this")
		}
		out := echoResp{Text: req.Text, Forwarded: IsForwarded(ctx)}
		if e, ok := LeaderEpoch(ctx); ok {
			out.Epoch = &e
		}
		return out, nil
	})
	Handle(m, opBatch, func(ctx context.Context, req echoReq) (batchResp, error) {
		return batchResp{HighWatermark: 42, Batches: append([]byte{0, 1, 0xff}, req.Text...)}, nil
	})
	Handle(m, opPayload, func(ctx context.Context, req payloadReq) (batchResp, error) {
		return batchResp{HighWatermark: int64(req.Count), Batches: req.Records}, nil
	})
	return m
}

// TestRequestPayload: a request whose type carries a payload travels as a
// frame, its JSON fields and its bytes (any bytes, empty or none) as they
// were; an operation whose request carries none refuses a frame as
// INVALID_JSON instead of reading it as JSON.
func TestRequestPayload(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	c := NewClient(secret)
	defer c.Close()
	ctx := context.Background()
	for _, payload := range [][]byte{[]byte("\x00\xff{\"not\":\"json\"}\n"), {}, nil} {
		got, err := Call(ctx, c, addr, opPayload, payloadReq{Count: 7, Records: payload})
		if err != nil || got.HighWatermark != 7 || string(got.Batches) != string(payload) {
			t.Errorf("payload %q: got %+v, %v", payload, got, err)
		}
	}
	_, err := Call(ctx, c, addr, opEchoFramed, payloadReq{Count: 1, Records: []byte("x")})
	if !api.IsCode(err, api.CodeInvalidJSON) {
		t.Fatalf("frame to an operation without a payload: %v, want INVALID_JSON", err)
	}
}

// TestPeerCallsNeedTheClusterSecret: without the secret, with another one
// or in another scheme, every path — operations, proxied client requests,
// unknown paths — is 401 UNAUTHENTICATED in JSON, before anything runs.
func TestPeerCallsNeedTheClusterSecret(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	for _, auth := range []string{"", "Bearer wrong horse battery staple", "Bearer ", "Basic Y29ycmVjdA==",
		"bearer correct horse battery staple", "Bearer correct horse battery staple2"} {
		for _, path := range []string{"/internal/test/echo", "/internal/forward/produce", "/internal/nope", "/"} {
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(`{"text":"x"}`))
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var body api.ErrorBody
			err = json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if err != nil || res.StatusCode != http.StatusUnauthorized || body.Code != api.CodeUnauthenticated || body.Error == "" {
				t.Errorf("%q %s: %d %+v %v", auth, path, res.StatusCode, body, err)
			}
		}
	}
	// A client holding another secret is refused the same way.
	_, err := Call(context.Background(), NewClient(testSecret(t, "another cluster's secret")), addr, opEcho, echoReq{Text: "x"})
	if !api.IsCode(err, api.CodeUnauthenticated) {
		t.Fatalf("call with another secret: %v", err)
	}
}

func TestCall(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	c := NewClient(secret)
	defer c.Close()
	ctx := context.Background()

	got, err := Call(ctx, c, addr, opEcho, echoReq{Text: "hello"})
	if err != nil || got.Text != "hello" || got.Forwarded {
		t.Fatalf("echo: %+v %v", got, err)
	}
	got, err = Call(ctx, c, addr, opEcho, echoReq{Text: "again"}, Forwarded())
	if err != nil || !got.Forwarded {
		t.Fatalf("forwarded echo: %+v %v", got, err)
	}

	// A reply with a payload: the bytes arrive as they were, binary and all.
	b, err := Call(ctx, c, addr, opBatch, echoReq{Text: "batch bytes\n"})
	if err != nil || b.HighWatermark != 42 || string(b.Batches) != "\x00\x01\xffbatch bytes\n" {
		t.Fatalf("payload: %+v %v", b, err)
	}

	// Errors keep their code, status and details across the wire.
	_, err = Call(ctx, c, addr, opEcho, echoReq{Fail: "not-leader"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeNotLeader || ae.Status != http.StatusMisdirectedRequest ||
		ae.Leader == nil || *ae.Leader != 2 || ae.LeaderEpoch == nil || *ae.LeaderEpoch != 7 {
		t.Fatalf("not leader: %v", err)
	}
	_, err = Call(ctx, c, addr, opEcho, echoReq{Fail: "bug"})
	if !errors.As(err, &ae) || ae.Code != api.CodeInternal || ae.Status != http.StatusInternalServerError {
		t.Fatalf("unmapped error: %v", err)
	}
	_, err = Call(ctx, c, addr, NewOp[echoReq, echoResp]("test/none"), echoReq{})
	if !api.IsCode(err, api.CodeNotFound) {
		t.Fatalf("unknown operation: %v", err)
	}

	// Malformed requests from a peer that holds the secret.
	for _, tc := range []struct {
		method, body string
		status       int
		code         string
	}{
		{http.MethodGet, "", http.StatusMethodNotAllowed, api.CodeMethodNotAllowed},
		{http.MethodPost, `{"text":`, http.StatusBadRequest, api.CodeInvalidJSON},
		{http.MethodPost, `{"text":5}`, http.StatusBadRequest, api.CodeInvalidJSON},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+"/internal/test/echo", strings.NewReader(tc.body))
		res, err := c.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body api.ErrorBody
		_ = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != tc.status || body.Code != tc.code {
			t.Errorf("%s %q: %d %+v", tc.method, tc.body, res.StatusCode, body)
		}
	}

	// No answer at all is an UnreachableError: a held port refuses every
	// connection, and no other socket can take it meanwhile.
	closed, err := heldport.Bind("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer closed.Close()
	dead := closed.Addr()
	if _, err := Call(ctx, c, dead, opEcho, echoReq{}); !IsUnreachable(err) {
		t.Fatalf("dead peer: %v", err)
	}
}

// TestForwardedCalls: a call sent Forwarded reaches its handler marked
// forwarded, with the forwarder's leader epoch when it sent one (and
// only then); a plain call is neither.
func TestForwardedCalls(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	c := NewClient(secret)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		opts      []CallOption
		forwarded bool
		epoch     *int32
	}{
		{"plain", nil, false, nil},
		{"forwarded", []CallOption{Forwarded()}, true, nil},
		{"forwarded at epoch 5", []CallOption{ForwardedAt(5)}, true, ptr(int32(5))},
	} {
		got, err := Call(ctx, c, addr, opEcho, echoReq{Text: tc.name}, tc.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Forwarded != tc.forwarded || (got.Epoch == nil) != (tc.epoch == nil) || (got.Epoch != nil && *got.Epoch != *tc.epoch) {
			t.Errorf("%s: handler saw forwarded=%v epoch=%v", tc.name, got.Forwarded, got.Epoch)
		}
	}
	// The epoch header alone, without the forwarded mark, means nothing.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+PathPrefix+"test/echo", strings.NewReader(`{"text":"x"}`))
	req.Header.Set(HeaderLeaderEpoch, "5")
	res, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got echoResp
	_ = json.NewDecoder(res.Body).Decode(&got)
	res.Body.Close()
	if got.Forwarded || got.Epoch != nil {
		t.Fatalf("an epoch header without the forwarded mark was taken: %+v", got)
	}
}

func ptr[T any](v T) *T { return &v }

func TestSecret(t *testing.T) {
	if _, err := NewSecret("short"); !errors.Is(err, ErrWeakSecret) {
		t.Fatalf("a 5-character secret: %v", err)
	}
	s := testSecret(t, "  correct horse battery staple\n")
	if s.Reveal() != "correct horse battery staple" {
		t.Fatalf("surrounding whitespace kept: %q", s.Reveal())
	}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s),
		fmt.Sprintf("%+v", struct{ S Secret }{s})} {
		if strings.Contains(out, "horse") {
			t.Fatalf("the secret printed: %s", out)
		}
	}
	g1, g2 := GenerateSecret(), GenerateSecret()
	if len(g1.Reveal()) != 64 || g1.Reveal() == g2.Reveal() {
		t.Fatalf("generated secrets %d chars, equal %v", len(g1.Reveal()), g1.Reveal() == g2.Reveal())
	}
	if (Secret{}).matches("") {
		t.Fatal("an unset secret admits an empty token")
	}
}

// TestServedCountsAuthenticatedRequests: the counts behind
// kairo_peer_requests_total grow by operation, for authenticated requests
// only.
func TestServedCountsAuthenticatedRequests(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := NewMux(secret, slog.New(slog.NewTextHandler(io.Discard, nil)))
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) { return echoResp{Text: req.Text}, nil })
	srv := httptest.NewServer(m)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := NewClient(secret)
	defer c.Close()
	for range 3 {
		if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Call(context.Background(), NewClient(testSecret(t, "another cluster's secret")), addr, opEcho, echoReq{}); err == nil {
		t.Fatal("a call with another secret succeeded")
	}
	if got := m.Served(); got["test/echo"] != 3 || len(got) != 1 {
		t.Fatalf("served %v, want test/echo 3", got)
	}
}

// TestRequestOverTheLimit: a request body longer than MaxRequestBytes is
// refused whether or not its length is announced, before the operation
// runs.
func TestRequestOverTheLimit(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	big := `{"text":"` + strings.Repeat("x", MaxRequestBytes) + `"}`
	for _, announced := range []bool{true, false} {
		var body io.Reader = strings.NewReader(big)
		if !announced {
			body = io.MultiReader(body) // hides the length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/internal/test/echo", body)
		req.Header.Set("Authorization", "Bearer correct horse battery staple")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e api.ErrorBody
		err = json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusBadRequest || e.Code != api.CodeInvalidJSON {
			t.Errorf("announced %v: %d %+v %v", announced, res.StatusCode, e, err)
		}
	}
}
