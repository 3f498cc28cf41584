// Package memory bounds the memory that requests hold at once, broker-wide:
// request bodies and what they decode to (Kafka's queued.max.request.bytes),
// and fetch replies. Without a bound, a handful of large requests or
// thousands of slow ones could take the broker's memory, and the broker
// with it.
//
// A Pool is one such bound. Each request has an Account, which charges a
// pool before the request allocates (a body's next buffer as its bytes
// arrive, the records it decodes, a fetch's reply) and gives everything
// back when the request ends. A charge that does not fit fails at once with
// ErrExhausted instead of waiting: the client is told to retry (503 with a
// Retry-After), and the memory goes to requests that can finish now.
//
// Part of a pool can be kept for small requests (Pool.reserve): while large
// bodies fill the rest, a request whose whole body is small still gets
// through, so a normal produce is served during a flood of large or slow
// ones.
package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// ErrExhausted is the error of a charge that does not fit its pool.
var ErrExhausted = errors.New("memory budget exhausted")

// SmallRequestBytes is the largest body of a small request, which may use
// the part of a pool kept for small requests.
const SmallRequestBytes = 64 << 10

// Pool is a bound on bytes held at once.
type Pool struct {
	name     string // the setting that sizes it, named in errors
	size     int64
	shared   *semaphore.Weighted // size - reserve: any request
	reserved *semaphore.Weighted // reserve: small requests only
	reserve  int64
	inUse    atomic.Int64
	// sharedInUse is the part of inUse outside the reserve.
	sharedInUse atomic.Int64
	refused     atomic.Int64
}

// NewPool returns a pool of size bytes, of which reserve are kept for small
// requests. name is the setting that sizes it.
func NewPool(name string, size, reserve int64) *Pool {
	reserve = min(max(reserve, 0), size)
	return &Pool{name: name, size: size, reserve: reserve,
		shared: semaphore.NewWeighted(size - reserve), reserved: semaphore.NewWeighted(reserve)}
}

// Size is the pool's bound in bytes.
func (p *Pool) Size() int64 { return p.size }

// InUse is how many bytes are charged now.
func (p *Pool) InUse() int64 { return p.inUse.Load() }

// Refused counts the charges that did not fit.
func (p *Pool) Refused() int64 { return p.refused.Load() }

// Admit reports whether n bytes would fit now for a request of the given
// size class, without charging them, and counts a refusal when they would
// not. A front door asks before reading a body whose length it knows, so
// that a flood of large bodies is refused before its bytes are read rather
// than halfway through. (Other requests may take the room meanwhile; the
// charges themselves still decide.)
func (p *Pool) Admit(n int64, small bool) bool {
	free := p.size - p.reserve - p.sharedInUse.Load()
	if small {
		free = p.size - p.inUse.Load()
	}
	if n <= free {
		return true
	}
	p.refused.Add(1)
	return false
}

// Exhausted is the error of a charge of n bytes that does not fit p.
func (p *Pool) Exhausted(n int64) error {
	return fmt.Errorf("%w: %d bytes wanted, %d of %s=%d in use by other requests",
		ErrExhausted, n, p.inUse.Load(), p.name, p.size)
}

// Account is what one request has charged. Its methods may be called from
// several goroutines; Release gives everything back.
type Account struct {
	small bool
	mu    sync.Mutex
	held  []holding
}

// holding is what an account holds of one pool, and of that how much
// comes from the small requests' reserve.
type holding struct {
	pool           *Pool
	total, reserve int64
}

// NewAccount returns the account of a request. A small request (its whole
// body is at most SmallRequestBytes) may draw on the pools' reserves.
func NewAccount(small bool) *Account { return &Account{small: small} }

// Charge takes n bytes of pool p for the request, or returns an error
// wrapping ErrExhausted when they do not fit. A nil account charges
// nothing (callers outside any request).
func (a *Account) Charge(p *Pool, n int64) error {
	if a == nil || n <= 0 {
		return nil
	}
	fromReserve := int64(0)
	if !p.shared.TryAcquire(n) {
		if !a.small || !p.reserved.TryAcquire(n) {
			p.refused.Add(1)
			return p.Exhausted(n)
		}
		fromReserve = n
	}
	p.inUse.Add(n)
	p.sharedInUse.Add(n - fromReserve)
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.held {
		if a.held[i].pool == p {
			a.held[i].total += n
			a.held[i].reserve += fromReserve
			return nil
		}
	}
	a.held = append(a.held, holding{pool: p, total: n, reserve: fromReserve})
	return nil
}

// Return gives back n bytes of pool p the request no longer holds (a buffer
// replaced by a larger one), at most what it holds.
func (a *Account) Return(p *Pool, n int64) {
	if a == nil || n <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.held {
		if h := &a.held[i]; h.pool == p {
			n = min(n, h.total)
			// Give back shared bytes first: the reserve is the scarcer.
			fromReserve := max(n-(h.total-h.reserve), 0)
			h.give(n, fromReserve)
			return
		}
	}
}

// Release gives back everything the account holds.
func (a *Account) Release() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.held {
		h := &a.held[i]
		h.give(h.total, h.reserve)
	}
	a.held = a.held[:0]
}

func (h *holding) give(n, fromReserve int64) {
	if n <= 0 {
		return
	}
	if shared := n - fromReserve; shared > 0 {
		h.pool.shared.Release(shared)
		h.pool.sharedInUse.Add(-shared)
	}
	if fromReserve > 0 {
		h.pool.reserved.Release(fromReserve)
	}
	h.pool.inUse.Add(-n)
	h.total -= n
	h.reserve -= fromReserve
}

type accountKey struct{}

// WithAccount returns ctx carrying a request's account.
func WithAccount(ctx context.Context, a *Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// AccountFrom returns the account ctx carries, or nil (which charges
// nothing).
func AccountFrom(ctx context.Context) *Account {
	a, _ := ctx.Value(accountKey{}).(*Account)
	return a
}

// Budget is a broker's pools.
type Budget struct {
	// Requests holds request bodies and what they decode to
	// (queued.max.request.bytes); an eighth is kept for small requests.
	Requests *Pool
	// Responses holds fetch replies (queued.max.response.bytes).
	Responses *Pool
}

// NewBudget returns the pools of the given sizes.
func NewBudget(requestBytes, responseBytes int64) Budget {
	return Budget{
		Requests:  NewPool("queued.max.request.bytes", requestBytes, requestBytes/8),
		Responses: NewPool("queued.max.response.bytes", responseBytes, 0),
	}
}
