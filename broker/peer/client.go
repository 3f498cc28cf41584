package peer

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
	"github.com/kairolog/kairolog/broker/buffers"
	"github.com/kairolog/kairolog/broker/tlsconf"
)

// MaxReplyBytes bounds a reply a broker reads from a peer.
const MaxReplyBytes = 256 << 20

// Client calls other brokers' peer listeners with the cluster secret over
// one keep-alive transport.
type Client struct {
	secret Secret
	http   *http.Client
	// scheme is https when calls go over TLS (WithTLS).
	scheme string
	// streams carry the calls to peers that serve streams (stream.go).
	streams *streams
}

// ClientOption configures a Client.
type ClientOption func(*clientOptions)

type clientOptions struct{ tls *tlsconf.Transport }

// WithTLS dials peers through t: mutual TLS with a broker certificate, or
// in permissive mode plain with a broker that has no TLS yet. The cluster
// secret is still sent on every call: it is the second factor.
func WithTLS(t *tlsconf.Transport) ClientOption {
	return func(o *clientOptions) { o.tls = t }
}

// NewClient is a Client that proves secret on every call.
func NewClient(secret Secret, opts ...ClientOption) *Client {
	var o clientOptions
	for _, opt := range opts {
		opt(&o)
	}
	t := &http.Transport{
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// Followers long-poll leaders while other calls go on: keep enough
		// idle connections per broker that none is dialled per request.
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
	}
	c := &Client{secret: secret, scheme: "http"}
	dial := func(ctx context.Context, addr string) (net.Conn, error) { return t.DialContext(ctx, "tcp", addr) }
	if o.tls != nil {
		dial = func(ctx context.Context, addr string) (net.Conn, error) { return o.tls.DialContext(ctx, "tcp", addr) }
		// The dialler returns a *tls.Conn, or in permissive mode a plain
		// connection to a broker without TLS, over which net/http then
		// speaks plain HTTP/1.1.
		t.DialTLSContext = o.tls.DialContext
		c.scheme = "https"
	}
	c.http = &http.Client{Transport: &authTransport{secret: secret, next: t}}
	c.streams = newStreams(dial, secret)
	return c
}

// HTTPClient is an http.Client whose requests carry the cluster secret.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Close drops idle connections and ends the streams; calls waiting on
// them fail as unreachable. Later calls dial again.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.streams.closeAll()
}

// authTransport adds the peer headers to every request.
type authTransport struct {
	secret Secret
	next   http.RoundTripper
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(headerAuthorization, "Bearer "+t.secret.value)
	return t.next.RoundTrip(r)
}

func (t *authTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// UnreachableError is a call that got no answer from the peer: it could
// not be dialled, or the connection broke. The operation may or may not
// have run.
type UnreachableError struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("broker at %s: %v", e.Addr, e.Err) }
func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err is an UnreachableError.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// baseURL accepts an address with or without a scheme; without one it is
// the client's.
func (c *Client) baseURL(addr string) string {
	if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
		return strings.TrimSuffix(addr, "/")
	}
	return c.scheme + "://" + addr
}

// CallOption changes how one call is sent.
type CallOption func(*callOptions)

// callOptions are the headers of a call besides the secret.
type callOptions struct {
	forwarded bool
	hasEpoch  bool
	epoch     int32
}

// Forwarded sends the call as passed on for another broker
// (HeaderForwarded): the receiver answers it or refuses it.
func Forwarded() CallOption {
	return func(o *callOptions) { o.forwarded = true }
}

// ForwardedAt is Forwarded, with the leader epoch the forwarding broker
// saw for the partition the call is about (HeaderLeaderEpoch), so that a
// receiver whose metadata is behind can wait for it to catch up.
func ForwardedAt(epoch int32) CallOption {
	return func(o *callOptions) { o.forwarded, o.hasEpoch, o.epoch = true, true, epoch }
}

// Call runs op on the broker whose peer listener is at addr. An error
// reply is an *api.Error; no reply is an *UnreachableError; the context's
// end is its error.
func Call[Req, Resp any](ctx context.Context, c *Client, addr string, op Op[Req, Resp], req Req, opts ...CallOption) (Resp, error) {
	var resp Resp
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	encode := func(binaryOK bool) (message, error) { return encodeMessage(&req, binaryOK) }
	rep, err := c.roundTrip(ctx, addr, op.name, o, encode)
	if err != nil {
		return resp, err
	}
	if rep.status != http.StatusOK {
		return resp, decodeError(rep.status, rep.body)
	}
	if err := decodeMessage(rep.body, rep.enc, &resp); err != nil {
		return resp, fmt.Errorf("peer %s: decode reply: %w", op.name, err)
	}
	if t, ok := any(&resp).(FrameTaker); ok && rep.frame != nil {
		frame := rep.frame
		t.TakePeerFrame(func() { replyFrames.Put(frame) })
	}
	return resp, nil
}

// FrameTaker is a reply that gives back the kept buffer its stream frame
// was read into, by calling release once nothing reads its payload (which
// points into it): a replica fetch's batches, once appended. Any other
// reply leaves its frame to the collector.
type FrameTaker interface {
	TakePeerFrame(release func())
}

// replyFrames are the buffers reply frames are read into.
var replyFrames buffers.Pool

// encodeFunc encodes a call's request, in binary if binaryOK and it has a
// binary encoding.
type encodeFunc func(binaryOK bool) (message, error)

// roundTrip sends one call and returns the reply's status, encoding and
// body: over the peer's stream, or over HTTP when the peer serves none.
func (c *Client) roundTrip(ctx context.Context, addr, op string, o callOptions, encode encodeFunc) (streamReply, error) {
	host, ok := c.streamAddress(addr)
	for attempt := 0; ok; attempt++ {
		s, streamed, err := c.streams.get(ctx, host)
		switch {
		case err != nil && ctx.Err() != nil:
			return streamReply{}, ctx.Err()
		case err != nil:
			return streamReply{}, &UnreachableError{Addr: addr, Err: err}
		case !streamed:
			ok = false
			continue
		}
		body, err := encode(s.binary)
		if err != nil {
			return streamReply{}, fmt.Errorf("peer %s: encode request: %w", op, err)
		}
		if body.len() > MaxRequestBytes {
			break // refused over HTTP with its error, as it is no frame
		}
		r, err := s.call(ctx, op, o, body)
		if errors.Is(err, errNotSent) && attempt == 0 {
			continue // the stream closed as the call came: once on a new one
		}
		if errors.Is(err, errNotSent) {
			err = &UnreachableError{Addr: addr, Err: err}
		}
		return r, err
	}
	body, err := encode(false)
	if err != nil {
		return streamReply{}, fmt.Errorf("peer %s: encode request: %w", op, err)
	}
	status, enc, raw, err := c.httpRoundTrip(ctx, addr, op, o, body.enc, body.bytes())
	return streamReply{status: status, enc: enc, body: raw}, err
}

// streamAddress is the host:port to stream to for addr, when the call
// goes the way the client dials (an address without a scheme, or with
// the client's own).
func (c *Client) streamAddress(addr string) (string, bool) {
	if host, ok := strings.CutPrefix(addr, c.scheme+"://"); ok {
		return strings.TrimSuffix(host, "/"), true
	}
	return addr, !strings.Contains(addr, "://")
}

// httpRoundTrip is roundTrip as one HTTP request.
func (c *Client) httpRoundTrip(ctx context.Context, addr, op string, o callOptions, enc bodyEncoding, body []byte) (int, bodyEncoding, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL(addr)+PathPrefix+op, bytes.NewReader(body))
	if err != nil {
		return 0, encJSON, nil, fmt.Errorf("peer %s: %w", op, err)
	}
	hreq.Header.Set("Content-Type", enc.contentType())
	if o.forwarded {
		hreq.Header.Set(HeaderForwarded, "1")
	}
	if o.hasEpoch {
		hreq.Header.Set(HeaderLeaderEpoch, strconv.Itoa(int(o.epoch)))
	}
	res, err := c.http.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return 0, encJSON, nil, ctx.Err()
		}
		return 0, encJSON, nil, &UnreachableError{Addr: addr, Err: err}
	}
	defer res.Body.Close()
	raw, err := readBody(io.LimitReader(res.Body, MaxReplyBytes), res.ContentLength, MaxReplyBytes)
	if err != nil {
		if ctx.Err() != nil {
			return 0, encJSON, nil, ctx.Err()
		}
		return 0, encJSON, nil, &UnreachableError{Addr: addr, Err: err}
	}
	return res.StatusCode, encodingOf(res.Header.Get("Content-Type")), raw, nil
}

// readBody reads a request or reply body of size bytes (-1: not said)
// from r, which stops at limit: into one buffer of its size when the size
// is known and within the limit, instead of one grown and copied as it
// comes (a replica fetch's reply is up to replica.fetch.response.max.bytes).
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	if size < 0 || size > limit {
		return io.ReadAll(r)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// appendFrame appends the head of a frame of js to dst: a 4-byte
// big-endian length, then js; the payload follows it as it is (message).
func appendFrame(dst, js []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(js)))
	return append(dst, js...)
}

// decodeFrame decodes a frame into msg, a request or a reply whose
// pointer is a Payload.
func decodeFrame[Msg any](raw []byte, msg *Msg) error {
	p, ok := any(msg).(Payload)
	if !ok {
		return frameError("a payload for a message that carries none")
	}
	if len(raw) < 4 {
		return frameError("%d bytes, shorter than its length prefix", len(raw))
	}
	n := binary.BigEndian.Uint32(raw)
	if uint64(n) > uint64(len(raw)-4) {
		return frameError("JSON of %d bytes in a frame of %d", n, len(raw))
	}
	if err := json.Unmarshal(raw[4:4+n], msg); err != nil {
		return frameError("%v", err)
	}
	p.SetPeerPayload(raw[4+n:])
	return nil
}

// decodeError is the *api.Error of an error reply; a body without a code
// (a proxy in between) is named by its status.
func decodeError(status int, raw []byte) error {
	var b api.ErrorBody
	if err := json.Unmarshal(raw, &b); err != nil || b.Code == "" {
		code := api.CodeInternal
		switch status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			code = api.CodeBrokerUnavailable
		case http.StatusNotFound:
			code = api.CodeNotFound
		}
		msg := strings.TrimSpace(string(raw))
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &api.Error{Status: status, Code: code, Message: msg}
	}
	return api.FromBody(status, b)
}
