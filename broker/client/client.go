// Package client is the Go client of the broker's HTTP API (docs/api.md):
// its calls, and the JSON shapes of produce and fetch, whose records travel
// as text or base64. Everything else it sends and returns is the core's
// vocabulary (broker/api), as the operator and kairoctl use it. Every
// method takes a context first and returns an *api.Error (checkable with
// errors.As or api.IsCode) when the broker answers with an error status.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kairolog/kairolog/broker/api"
)

// DefaultTimeout bounds a request that does not long-poll.
const DefaultTimeout = 30 * time.Second

// Client talks to one broker (any broker serves every request).
type Client struct {
	base      *url.URL
	http      *http.Client
	timeout   time.Duration
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the HTTP client (and its transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithTimeout bounds each request; long polls get their wait on top.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// NewTransport is a keep-alive transport sized for many concurrent requests
// to few brokers.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   false,
	}
}

// New returns a client for the broker at addr: "http://host:port", or
// "host:port" which means http.
func New(addr string, opts ...Option) (*Client, error) {
	if addr == "" {
		return nil, errors.New("client: empty broker address")
	}
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(strings.TrimRight(addr, "/"))
	if err != nil {
		return nil, fmt.Errorf("client: broker address %q: %w", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("client: broker address %q: scheme must be http or https", addr)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: broker address %q has no host", addr)
	}
	c := &Client{base: u, timeout: DefaultTimeout, userAgent: "kairolog-client"}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{Transport: NewTransport()}
	}
	return c, nil
}

// Address is the broker's base URL.
func (c *Client) Address() string { return c.base.String() }

// call sends one request. in (when not nil) is sent as JSON; a 2xx reply is
// decoded into out (when not nil); any other reply becomes an *Error. extra
// lengthens the timeout for long polls.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any, extra time.Duration) error {
	var body io.Reader
	if enc, ok := in.(jsonAppender); ok {
		body = bytes.NewReader(enc.appendJSON(make([]byte, 0, enc.jsonSize())))
	} else if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout+extra)
		defer cancel()
	}
	u := *c.base
	u.Path = c.base.Path + path
	u.RawPath = ""
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if dec, ok := out.(jsonDecoder); ok {
		raw, err := readReply(resp)
		if err == nil {
			err = dec.decodeJSON(raw)
		}
		if err != nil {
			return fmt.Errorf("client: decode reply of %s %s: %w", method, path, err)
		}
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: decode reply of %s %s: %w", method, path, err)
	}
	return nil
}

// jsonAppender is a request body that writes its own JSON (the produce
// request, the hottest one); jsonSize is about the bytes it writes, so
// that its buffer is allocated once.
type jsonAppender interface {
	appendJSON(b []byte) []byte
	jsonSize() int
}

// jsonDecoder is a reply that reads its own JSON from the whole body.
type jsonDecoder interface{ decodeJSON(raw []byte) error }

// readReply reads a reply's body whole, sized by its Content-Length when
// it has one.
func readReply(resp *http.Response) ([]byte, error) {
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n < 64<<20 {
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(resp.Body)
	return buf.Bytes(), err
}

func decodeError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var b api.ErrorBody
	if err := json.Unmarshal(raw, &b); err != nil || b.Code == "" {
		msg := strings.TrimSpace(string(raw))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &api.Error{Status: resp.StatusCode, Code: codeForStatus(resp.StatusCode), Message: msg}
	}
	return api.FromBody(resp.StatusCode, b)
}

// codeForStatus names a reply that did not carry a JSON error (a proxy or
// load balancer in between).
func codeForStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return api.CodeNotFound
	case http.StatusMethodNotAllowed:
		return api.CodeMethodNotAllowed
	case http.StatusRequestEntityTooLarge:
		return api.CodeBodyTooLarge
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return api.CodeBrokerUnavailable
	}
	if status >= 400 && status < 500 {
		return api.CodeInvalidArgument
	}
	return api.CodeInternal
}

func esc(s string) string { return url.PathEscape(s) }
