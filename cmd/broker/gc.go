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
// brokers' CPU under batched produce (docs/benchmarks.md).
//
// A broker that knows how much memory it may use, from Go's soft memory
// limit, lets its heap grow between collections by up to a quarter of that
// limit (at most gcHeadroom), less what its requests hold in the request
// and response budgets, and by what is live (Go's default) once that is
// more; the soft limit itself makes the collector run as often as it must
// near the limit. The soft limit is GOMEMLIMIT, or in a container with a
// memory limit 90 % of it (automemlimit; AUTOMEMLIMIT sets another ratio,
// or "off"). A broker without a known limit keeps Go's default: room it
// was not given is not assumed (under test/hostile's flood the extra
// headroom raised a broker's peak memory by a quarter). GOGC in the
// environment takes precedence over both.
const (
	gcHeadroom          = 128 << 20
	memoryLimitOfCgroup = 0.9
)

// tuneGC sets the collector's targets and logs them; held is what requests
// hold in the broker's memory budgets. stop ends the tuning (a broker
// never does).
func tuneGC(log *slog.Logger, held func() uint64) (stop func()) {
	stop = func() {}
	limit, err := memlimit.Set(memlimit.WithRatio(memoryLimitOfCgroup), memlimit.WithProvider(memlimit.FromCgroup))
	if err != nil {
		log.Warn("No soft memory limit from the container's cgroup", "error", err)
	}
	var attrs []any
	known := limit > 0 && limit < math.MaxInt64
	if known {
		attrs = append(attrs, "memory_limit_bytes", limit)
	}
	switch gogc := os.Getenv("GOGC"); {
	case gogc != "":
		attrs = append(attrs, "gogc", gogc)
	case !known:
		attrs = append(attrs, "gogc", "100", "reason", "no memory limit known")
	default:
		headroom := headroomFor(uint64(limit))
		stop = startGCTuner(headroom, held)
		attrs = append(attrs, "heap_headroom_bytes", headroom)
	}
	log.Info("Garbage collection", attrs...)
	return stop
}

// headroomFor is the most the heap may grow between collections under a
// soft memory limit of limit bytes.
func headroomFor(limit uint64) uint64 { return min(gcHeadroom, limit/4) }

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
