package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// answers collects what the brokers answered, by kind of request, and the
// answers that break the rules: a 5xx other than a 503 with a retry hint,
// or any answer a kind does not allow (a 4xx that says something false).
type answers struct {
	mu         sync.Mutex
	byKind     map[string]map[string]int
	violations []string
}

func newAnswers() *answers { return &answers{byKind: map[string]map[string]int{}} }

// reply is one answer: its status, code, Retry-After and body.
type reply struct {
	status     int
	code       string
	retryAfter string
	body       string
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, r.code) }

// retriable is a 503 that says when to retry.
func (r reply) retriable() bool {
	var hint struct {
		RetryAfterMs int64 `json:"retry_after_ms"`
	}
	_ = json.Unmarshal([]byte(r.body), &hint)
	return r.status == 503 && r.retryAfter != "" && hint.RetryAfterMs > 0
}

// record files r under kind, and a violation when it is a 5xx other than a
// retriable 503, or when ok (the kind's rule) refuses it. A retriable 503
// is always allowed: saying "not now" is never false.
func (a *answers) record(kind, what string, r reply, ok func(reply) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byKind[kind] == nil {
		a.byKind[kind] = map[string]int{}
	}
	a.byKind[kind][r.String()]++
	switch {
	case r.retriable():
	case r.status >= 500:
		a.violations = append(a.violations, fmt.Sprintf("%s: %s answered %s: %s", kind, what, r, r.body))
	case !ok(r):
		a.violations = append(a.violations, fmt.Sprintf("%s: %s answered %s: %s", kind, what, r, r.body))
	}
}

// report logs the answers by kind and fails the test for each violation.
func (a *answers) report(t *testing.T) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	kinds := make([]string, 0, len(a.byKind))
	for k := range a.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%s: %v", k, a.byKind[k])
	}
	for i, v := range a.violations {
		if i == 20 {
			t.Errorf("… and %d more", len(a.violations)-20)
			break
		}
		t.Error(v)
	}
}

// send sends one request and reads its reply; err is a transport error
// (the broker down or closing the connection).
func send(ctx context.Context, hc *http.Client, method, url, body string, header http.Header) (reply, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return reply{}, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	return reply{status: resp.StatusCode, code: e.Code, retryAfter: resp.Header.Get("Retry-After"), body: string(raw)}, nil
}

// is returns a rule that allows the given status and code ("" = any code).
func is(status int, code string) func(reply) bool {
	return func(r reply) bool { return r.status == status && (code == "" || r.code == code) }
}

// okWith returns a rule that allows a 200 whose body contains want.
func okWith(want string) func(reply) bool {
	return func(r reply) bool { return r.status == 200 && strings.Contains(r.body, want) }
}

func anyOf(rules ...func(reply) bool) func(reply) bool {
	return func(r reply) bool {
		for _, ok := range rules {
			if ok(r) {
				return true
			}
		}
		return false
	}
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) {
	for ctx.Err() == nil {
		f()
		sleep(ctx, interval)
	}
}
