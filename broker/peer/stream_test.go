package peer

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// countingServer serves h and counts the HTTP requests that reach it:
// with streams, one upgrade for any number of calls.
func countingServer(t *testing.T, h http.Handler) (addr string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests
}

// TestCallsShareOneStream: a client's calls to a broker that serves
// streams — plain, forwarded with an epoch, with payloads, refused with
// a code — all travel on one stream, one HTTP request (the upgrade) for
// all of them, and are served as the same requests over HTTP would be.
func TestCallsShareOneStream(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := testMux(secret)
	streams := NewStreamServer(secret, m, nil)
	defer streams.Close()
	addr, requests := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	ctx := context.Background()
	for i := range 20 {
		got, err := Call(ctx, c, addr, opEcho, echoReq{Text: fmt.Sprint(i)}, ForwardedAt(int32(i)))
		if err != nil || got.Text != fmt.Sprint(i) || !got.Forwarded || got.Epoch == nil || *got.Epoch != int32(i) {
			t.Fatalf("call %d: %+v %v", i, got, err)
		}
	}
	got, err := Call(ctx, c, addr, opPayload, payloadReq{Count: 5, Records: []byte("\x00records\xff")})
	if err != nil || got.HighWatermark != 5 || string(got.Batches) != "\x00records\xff" {
		t.Fatalf("payload: %+v %v", got, err)
	}
	_, err = Call(ctx, c, addr, opEcho, echoReq{Fail: "not-leader"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeNotLeader || ae.Status != api.StatusForCode(api.CodeNotLeader) || *ae.Leader != 2 {
		t.Fatalf("refused call: %v", err)
	}
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d HTTP requests for 22 calls, want 1 (the upgrade)", n)
	}
	if served := m.Served(); served["test/echo"] != 21 || served["test/payload"] != 1 {
		t.Fatalf("served %v", served)
	}
}

// TestPeerWithoutStreams: a broker from before streams answers the
// upgrade 404; calls to it go over HTTP, one request each, and it is not
// asked for a stream again at every call.
func TestPeerWithoutStreams(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := testMux(secret)
	addr, requests := countingServer(t, m)
	c := NewClient(secret)
	defer c.Close()
	for i := range 10 {
		got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: fmt.Sprint(i)}, Forwarded())
		if err != nil || got.Text != fmt.Sprint(i) || !got.Forwarded {
			t.Fatalf("call %d: %+v %v", i, got, err)
		}
	}
	if n := requests.Load(); n != 11 {
		t.Fatalf("%d HTTP requests for 10 calls, want 11 (one refused upgrade)", n)
	}
	if served := m.Served(); served["test/echo"] != 10 {
		t.Fatalf("served %v", served)
	}
}

// TestConcurrentCallsOnAStream: calls answered out of order each get
// their own reply.
func TestConcurrentCallsOnAStream(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := NewMux(secret, quietLog())
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) {
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		return echoResp{Text: req.Text}, nil
	})
	streams := NewStreamServer(secret, m, nil)
	defer streams.Close()
	addr, requests := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			want := strings.Repeat(fmt.Sprint(i), i%7+1)
			got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: want})
			if err != nil || got.Text != want {
				t.Errorf("call %d: %+v %v", i, got, err)
			}
		})
	}
	wg.Wait()
	if n := requests.Load(); n != 1 {
		t.Fatalf("%d HTTP requests, want 1", n)
	}
}

// TestCancelledCallEndsItsHandler: a caller that stops waiting cancels
// the call's context on the serving broker, as closing an HTTP
// connection does, and the stream goes on carrying other calls.
func TestCancelledCallEndsItsHandler(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := NewMux(secret, quietLog())
	ended := make(chan error, 1)
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) {
		if req.Text == "wait" {
			<-ctx.Done()
			ended <- ctx.Err()
			return echoResp{}, ctx.Err()
		}
		return echoResp{Text: req.Text}, nil
	})
	streams := NewStreamServer(secret, m, nil)
	defer streams.Close()
	addr, _ := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Call(ctx, c, addr, opEcho, echoReq{Text: "wait"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call past its deadline: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler's context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler of a cancelled call is still running")
	}
	if got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "after"}); err != nil || got.Text != "after" {
		t.Fatalf("call after a cancelled one: %+v %v", got, err)
	}
}

// TestClosedStreamIsUnreachable: when the serving broker ends its streams
// (it stops), the calls waiting on them are unreachable, as with a
// closed HTTP connection, and so is the next call when it serves no more.
func TestClosedStreamIsUnreachable(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	m := NewMux(secret, quietLog())
	started := make(chan struct{}, 1)
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) {
		started <- struct{}{}
		<-ctx.Done()
		return echoResp{}, ctx.Err()
	})
	streams := NewStreamServer(secret, m, nil)
	addr, _ := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	errs := make(chan error, 1)
	go func() {
		_, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "x"})
		errs <- err
	}()
	<-started
	streams.Close()
	select {
	case err := <-errs:
		if !IsUnreachable(err) {
			t.Fatalf("call on a closed stream: %v, want unreachable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call on a closed stream still waiting")
	}
	if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "x"}); !IsUnreachable(err) {
		t.Fatalf("call after the streams closed: %v, want unreachable", err)
	}
}

// TestStreamUpgradeRefusals: asking for a stream without the secret is
// 401 UNAUTHENTICATED, without the Upgrade header 400, both in JSON.
func TestStreamUpgradeRefusals(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	for _, tc := range []struct {
		auth, upgrade string
		status        int
		code          string
	}{
		{"", streamProtocol, http.StatusUnauthorized, api.CodeUnauthenticated},
		{"Bearer wrong", streamProtocol, http.StatusUnauthorized, api.CodeUnauthenticated},
		{"Bearer correct horse battery staple", "", http.StatusBadRequest, api.CodeInvalidArgument},
		{"Bearer correct horse battery staple", "websocket", http.StatusBadRequest, api.CodeInvalidArgument},
	} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+StreamPath, nil)
		req.Header.Set("Authorization", tc.auth)
		if tc.upgrade != "" {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", tc.upgrade)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
			t.Errorf("%+v: %d %s", tc, res.StatusCode, body)
		}
	}
}

// TestMalformedFramesEndOnlyTheirStream: a peer that sends a frame that
// does not decode loses its stream; other streams go on.
func TestMalformedFramesEndOnlyTheirStream(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr := startPeer(t, secret)
	c := NewClient(secret)
	defer c.Close()
	if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "before"}); err != nil {
		t.Fatal(err)
	}
	for _, frame := range [][]byte{
		{0, 0, 0, 1, 9},          // an unknown kind
		{0, 0, 0, 3, 1, 0, 0},    // a call cut short
		{0xff, 0xff, 0xff, 0xff}, // longer than any call
		{0, 0, 0, 16, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xff}, // a name longer than the call
	} {
		conn, r := rawStream(t, addr, "Bearer correct horse battery staple")
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("frame %x: stream read %v, want the stream closed", frame, err)
		}
		conn.Close()
	}
	if got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "after"}); err != nil || got.Text != "after" {
		t.Fatalf("call on another stream: %+v %v", got, err)
	}
}

// rawStream upgrades a connection to addr by hand.
func rawStream(t *testing.T, addr, auth string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", StreamPath, auth, streamProtocol)
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", res, err)
	}
	return conn, r
}

// FuzzStreamFrames feeds arbitrary frames to the call and reply
// decoders: a peer's frames are never trusted, so they fail with an
// error, never panic; a call that decodes encodes back to the same bytes.
func FuzzStreamFrames(f *testing.F) {
	call := func(id uint64, op string, o callOptions, enc bodyEncoding, body string) []byte {
		return append(callFrame(id, op, o, enc, len(body)), body...)[4:]
	}
	f.Add(call(1, "replica/fetch-session", callOptions{}, encFrame, "\x00\x00\x00\x02{}batches"))
	f.Add(call(2, "replica/fetch-session", callOptions{}, encBinary, "\x00\x01\x02"))
	f.Add(call(7, "core/produce-many", callOptions{forwarded: true, hasEpoch: true, epoch: -1}, encJSON, `{"x":1}`))
	f.Add(cancelFrame(9)[4:])
	f.Add(append(replyFrame(3, 503, encJSON, 2), "{}"...)[4:])
	f.Add(append(replyFrame(4, 200, encBinary, 2), "\x00\x00"...)[4:])
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		if c, err := decodeCall(raw); err == nil && c.kind == frameCall {
			o := callOptions{forwarded: c.forwarded, hasEpoch: c.hasEpoch, epoch: c.epoch}
			again := call(c.id, c.op, o, c.enc, string(c.body))
			if string(again[16:]) != string(raw[16:]) || binary.BigEndian.Uint64(again[1:9]) != c.id {
				t.Fatalf("call %x encodes back as %x", raw, again)
			}
		}
		if r, err := decodeReply(raw); err == nil && len(r.body) != len(raw)-replyHeaderBytes {
			t.Fatalf("reply body of %d bytes from %d", len(r.body), len(raw))
		}
	})
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestIdleStreamClosesAndCallsGoOn: a stream without calls is closed
// (streamIdleTimeout); a call that finds it closed before it went out is
// sent on a new stream, never failed for it.
func TestIdleStreamClosesAndCallsGoOn(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	streams := NewStreamServer(secret, testMux(secret), nil)
	defer streams.Close()
	addr, requests := countingServer(t, streams)
	c := NewClient(secret)
	defer c.Close()
	if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	c.streams.mu.Lock()
	s := c.streams.byAddr[addr]
	c.streams.mu.Unlock()
	s.closeIfIdle()
	if _, err := s.call(context.Background(), opEcho.Name(), callOptions{}, message{head: []byte(`{}`), enc: encJSON}); !errors.Is(err, errNotSent) {
		t.Fatalf("call on a closed stream: %v, want it not sent", err)
	}
	if got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "again"}); err != nil || got.Text != "again" {
		t.Fatalf("call after the idle stream closed: %+v %v", got, err)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("%d upgrades, want 2", n)
	}
}

// silentPeer is a broker whose echo handler answers "wait" only when the
// call ends, as a peer that stopped would: nothing comes back for it.
func silentPeer(t *testing.T) (addr string, upgrades *atomic.Int64) {
	t.Helper()
	secret := testSecret(t, "correct horse battery staple")
	m := NewMux(secret, quietLog())
	Handle(m, opEcho, func(ctx context.Context, req echoReq) (echoResp, error) {
		if req.Text == "wait" {
			<-ctx.Done()
			return echoResp{}, ctx.Err()
		}
		return echoResp{Text: req.Text}, nil
	})
	streams := NewStreamServer(secret, m, nil)
	t.Cleanup(streams.Close)
	return countingServer(t, streams)
}

// withSilenceLimit shortens streamSilenceLimit for one test.
func withSilenceLimit(t *testing.T, d time.Duration) {
	old := streamSilenceLimit
	streamSilenceLimit = d
	t.Cleanup(func() { streamSilenceLimit = old })
}

// TestSilentStreamIsDropped: a call that reaches its deadline after
// waiting streamSilenceLimit on a stream that brought nothing back drops
// the stream: the other calls waiting on it fail as unreachable at once
// instead of at their own deadlines, and the next call dials a new one.
func TestSilentStreamIsDropped(t *testing.T) {
	withSilenceLimit(t, 300*time.Millisecond)
	addr, upgrades := silentPeer(t)
	c := NewClient(testSecret(t, "correct horse battery staple"))
	defer c.Close()
	if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "first"}); err != nil {
		t.Fatal(err)
	}
	other := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := Call(ctx, c, addr, opEcho, echoReq{Text: "wait"})
		other <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Call(ctx, c, addr, opEcho, echoReq{Text: "wait"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call to a silent peer: %v, want its deadline", err)
	}
	select {
	case err := <-other:
		var ue *UnreachableError
		if !errors.As(err, &ue) || !errors.Is(ue.Err, errPeerSilent) {
			t.Fatalf("other call on the silent stream: %v, want unreachable, peer silent", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other call on the silent stream is still waiting")
	}
	if got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "after"}); err != nil || got.Text != "after" {
		t.Fatalf("call after the silent stream was dropped: %+v %v", got, err)
	}
	if n := upgrades.Load(); n != 2 {
		t.Fatalf("%d upgrades, want 2: the silent stream is dropped and a new one dialled", n)
	}
}

// TestAnsweringStreamIsKept: a call that times out while the peer answers
// other calls on the stream, or after less than streamSilenceLimit, leaves
// the stream alone: the peer is alive, only slow for that call.
func TestAnsweringStreamIsKept(t *testing.T) {
	withSilenceLimit(t, 300*time.Millisecond)
	addr, upgrades := silentPeer(t)
	c := NewClient(testSecret(t, "correct horse battery staple"))
	defer c.Close()
	done := make(chan struct{})
	answered := make(chan error, 1)
	go func() {
		defer close(answered)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "alive"}); err != nil {
				answered <- err
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if _, err := Call(ctx, c, addr, opEcho, echoReq{Text: "wait"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow call: %v, want its deadline", err)
	}
	close(done)
	if err := <-answered; err != nil {
		t.Fatalf("call beside the slow one: %v", err)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	if _, err := Call(short, c, addr, opEcho, echoReq{Text: "wait"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("short call: %v, want its deadline", err)
	}
	if _, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "after"}); err != nil {
		t.Fatal(err)
	}
	if n := upgrades.Load(); n != 1 {
		t.Fatalf("%d upgrades, want 1: a peer that answers keeps its stream", n)
	}
}
