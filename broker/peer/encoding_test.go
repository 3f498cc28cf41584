package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kairolog/kairolog/broker/api"
)

// sumReq and sumResp have a binary encoding besides JSON; decodedBinary
// says which one a message arrived in.
type sumReq struct {
	Values        []int64 `json:"values"`
	decodedBinary bool
}

type sumResp struct {
	Sum           int64 `json:"sum"`
	decodedBinary bool
}

func (r *sumReq) AppendPeerBinary(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Values)))
	for _, v := range r.Values {
		dst = binary.BigEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

func (r *sumReq) DecodePeerBinary(src []byte) error {
	if len(src) < 4 || uint64(len(src)-4) != 8*uint64(binary.BigEndian.Uint32(src)) {
		return errors.New("bad sum request")
	}
	for p := src[4:]; len(p) > 0; p = p[8:] {
		r.Values = append(r.Values, int64(binary.BigEndian.Uint64(p)))
	}
	r.decodedBinary = true
	return nil
}

func (r *sumResp) AppendPeerBinary(dst []byte) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(r.Sum))
}

func (r *sumResp) DecodePeerBinary(src []byte) error {
	if len(src) != 8 {
		return errors.New("bad sum reply")
	}
	r.Sum, r.decodedBinary = int64(binary.BigEndian.Uint64(src)), true
	return nil
}

var opSum = NewOp[sumReq, sumResp]("test/sum")

// sumServer serves opSum (and the test operations) and records the
// content type of every call it is asked, over HTTP or as a stream call.
func sumServer(t *testing.T, secret Secret, streams bool, jsonOnly bool) (addr string, seen func() []string) {
	t.Helper()
	m := testMux(secret)
	Handle(m, opSum, func(ctx context.Context, req sumReq) (sumResp, error) {
		var out sumResp
		for _, v := range req.Values {
			out.Sum += v
		}
		return out, nil
	})
	var mu sync.Mutex
	var types []string
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == opSum.path() {
			mu.Lock()
			types = append(types, r.Header.Get("Content-Type"))
			mu.Unlock()
		}
		m.ServeHTTP(w, r)
	})
	if streams {
		s := NewStreamServer(secret, h, quietLog())
		s.jsonOnly = jsonOnly
		t.Cleanup(s.Close)
		h = s
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), types...)
	}
}

// TestBinaryBodies: a message with a binary encoding travels in it on a
// stream whose server reads binary bodies, and its reply comes back in
// binary; a stream server from before binary bodies, and a broker without
// streams, get and answer JSON, with the same result.
func TestBinaryBodies(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	for _, tc := range []struct {
		name              string
		streams, jsonOnly bool
		wantType          string
	}{
		{"stream", true, false, binaryType},
		{"stream without binary", true, true, jsonType},
		{"http", false, false, jsonType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, seen := sumServer(t, secret, tc.streams, tc.jsonOnly)
			c := NewClient(secret)
			defer c.Close()
			for range 3 {
				got, err := Call(context.Background(), c, addr, opSum, sumReq{Values: []int64{1, -2, 1 << 40}})
				if err != nil || got.Sum != 1<<40-1 {
					t.Fatalf("sum: %+v %v", got, err)
				}
				if got.decodedBinary != (tc.wantType == binaryType) {
					t.Fatalf("reply decoded from binary: %v, want %v", got.decodedBinary, tc.wantType == binaryType)
				}
			}
			for _, ct := range seen() {
				if ct != tc.wantType {
					t.Fatalf("calls arrived as %v, want every one %s", seen(), tc.wantType)
				}
			}
			// A message without a binary encoding goes as JSON on any wire.
			if got, err := Call(context.Background(), c, addr, opEcho, echoReq{Text: "json"}); err != nil || got.Text != "json" {
				t.Fatalf("echo: %+v %v", got, err)
			}
		})
	}
}

// TestMalformedBinaryBodies: a binary body the operation cannot decode,
// or sent to an operation without a binary encoding, is refused with a
// code, and the stream goes on serving.
func TestMalformedBinaryBodies(t *testing.T) {
	secret := testSecret(t, "correct horse battery staple")
	addr, _ := sumServer(t, secret, true, false)
	c := NewClient(secret)
	defer c.Close()
	s, streamed, err := c.streams.get(context.Background(), addr)
	if err != nil || !streamed || !s.binary {
		t.Fatalf("stream: %v streamed %v binary %v", err, streamed, s != nil && s.binary)
	}
	for op, body := range map[string]string{opSum.Name(): "\x00\x00\x00\x09short", opEcho.Name(): "\x00"} {
		r, err := s.call(context.Background(), op, callOptions{}, message{head: []byte(body), enc: encBinary})
		if err != nil {
			t.Fatal(err)
		}
		e := decodeError(r.status, r.body)
		var ae *api.Error
		if !errors.As(e, &ae) || ae.Status != http.StatusBadRequest || ae.Code != api.CodeInvalidJSON {
			t.Fatalf("%s with a malformed binary body: %d %v", op, r.status, e)
		}
	}
	if got, err := Call(context.Background(), c, addr, opSum, sumReq{Values: []int64{2, 3}}); err != nil || got.Sum != 5 {
		t.Fatalf("after the refusals: %+v %v", got, err)
	}
}
