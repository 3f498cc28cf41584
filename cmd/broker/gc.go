package main

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// The collector's targets. Most of what a broker allocates under load is
// request bodies, record batches and replies, held only while their
// request is served. With Go's default target, a collection each time the
// heap doubles, a broker whose live heap is a few dozen megabytes
// collected every few dozen batched produces: a sixth of the three
// brokers' CPU under batched produce (docs/benchmarks.md). A broker
// therefore lets its heap grow by up to gcHeadroom between collections,
// less what its requests hold in the request and response budgets, and by
// what is live (Go's default) once that is more. A broker with a large
// live heap collects as before; one with a small heap uses up to
// gcHeadroom more memory and collects less often; one whose budgets are
// full (a flood of large or slow requests) collects as Go's default does.
// In a container with a memory limit, a soft limit at 90 % of it
// (automemlimit) makes the collector run as often as it must near the
// limit, whatever the target. GOGC and GOMEMLIMIT in the environment take
// precedence, as AUTOMEMLIMIT (a ratio, or "off") does for the soft limit.
const (
	gcHeadroom          = 128 << 20
	memoryLimitOfCgroup = 0.9
)

// tuneGC sets the collector's targets and logs them; held is what requests
// hold in the broker's memory budgets.
func tuneGC(log *slog.Logger, held func() uint64) {
	attrs := []any{"gogc", os.Getenv("GOGC")}
	if os.Getenv("GOGC") == "" {
		startGCTuner(gcHeadroom, held)
		attrs = []any{"heap_headroom_bytes", gcHeadroom}
	}
	limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitOfCgroup), memlimit.WithProvider(memlimit.FromCgroup))
	if err != nil {
		log.Warn("No soft memory limit from the container's cgroup", "error", err)
	}
	if limit > 0 && limit < math.MaxInt64 {
		attrs = append(attrs, "memory_limit_bytes", limit)
	}
	log.Info("Garbage collection", attrs...)
}

// gcPercentFor is the GC percent at which a heap with live bytes live
// collects once it has grown by headroom or by live, whichever is more.
// The runtime's smallest heap goal is 4 MiB scaled by the percent, so a
// live heap below that (none before the first collection) counts as 4 MiB.
func gcPercentFor(live, headroom uint64) int {
	live = max(live, 4<<20)
	return int(max(headroom*100/live, 100))
}

// gcTuner sets the GC percent after each collection from the heap that
// collection found live.
type gcTuner struct {
	headroom uint64
	held     func() uint64 // taken from headroom
	live     []metrics.Sample
	stopped  atomic.Bool
}

// gcSentinel is an object the next collection finds unreachable. It holds a
// pointer so that it is not a tiny allocation, which could share its
// memory with a reachable object and never be collected.
type gcSentinel struct{ _ *byte }

// startGCTuner tunes now and after every collection until stop is called
// (a broker never does).
func startGCTuner(headroom uint64, held func() uint64) (stop func()) {
	t := &gcTuner{headroom: headroom, held: held, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.tune()
	t.arm()
	return func() { t.stopped.Store(true) }
}

// arm leaves a sentinel whose cleanup runs after the next collection: it
// tunes and arms again.
func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(t *gcTuner) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	}, t)
}

func (t *gcTuner) tune() {
	metrics.Read(t.live)
	debug.SetGCPercent(gcPercentFor(t.live[0].Value.Uint64(), t.headroom-min(t.held(), t.headroom)))
}
