package main

import (
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 3200},             // before the first collection: 4 MiB + 128 MiB
		{1 << 20, 3200},       // below the runtime's smallest goal
		{16 << 20, 800},       // 16 MiB live: collect at 144 MiB
		{128 << 20, 100},      // growing by what is live is growing by the headroom
		{1 << 30, 100},        // a large live heap collects as Go's default does
		{math.MaxUint64, 100}, // never below the default
	} {
		if got := gcPercentFor(c.live, 128<<20); got != c.want {
			t.Errorf("live %d: GC percent %d, want %d", c.live, got, c.want)
		}
	}
}

// gogc is the GC percent in force.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGCTunerFollowsTheLiveHeap: after each collection the percent is set
// from the heap found live.
func TestGCTunerFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var inBudgets atomic.Uint64
	defer startGCTuner(128<<20, inBudgets.Load)()
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live: percent 200
	}
	deadline := time.Now().Add(10 * time.Second)
	for gogc() > 250 && time.Now().Before(deadline) {
		runtime.GC() // the tuner runs after the collection, on the cleanup goroutine
		time.Sleep(10 * time.Millisecond)
	}
	if p := gogc(); p < 150 || p > 250 {
		t.Errorf("with 64 MiB live the GC percent is %d, want about 200", p)
	}
	// Requests holding 96 MiB of the budgets leave 32 MiB of headroom,
	// less than what is live: the default.
	inBudgets.Store(96 << 20)
	for gogc() > 100 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := gogc(); p != 100 {
		t.Errorf("with 64 MiB live and 96 MiB held by requests the GC percent is %d, want 100", p)
	}
	runtime.KeepAlive(live)
}

// TestTuneGCWithoutALimit: a broker that knows no memory limit keeps Go's
// default; with GOMEMLIMIT it tunes.
func TestTuneGCWithoutALimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("AUTOMEMLIMIT", "off") // whatever cgroup this test runs in
	stop := tuneGC(slog.New(slog.DiscardHandler), func() uint64 { return 0 })
	runtime.GC()
	time.Sleep(50 * time.Millisecond) // a tuner would have run by now
	stop()
	if p := gogc(); p != 100 {
		t.Errorf("without a memory limit the GC percent is %d, want Go's default 100", p)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30) // as the runtime set it from GOMEMLIMIT
	defer tuneGC(slog.New(slog.DiscardHandler), func() uint64 { return 0 })()
	if p := gogc(); p <= 100 {
		t.Errorf("with GOMEMLIMIT=1GiB and a small heap the GC percent is %d, want more than 100", p)
	}
}

func TestHeadroomFor(t *testing.T) {
	if got := headroomFor(1 << 30); got != gcHeadroom {
		t.Errorf("under 1 GiB: headroom %d, want %d", got, gcHeadroom)
	}
	if got := headroomFor(256 << 20); got != 64<<20 {
		t.Errorf("under 256 MiB: headroom %d, want a quarter, %d", got, 64<<20)
	}
}

// TestTuneGCKeepsGOGC: GOGC, which the runtime read at start, is left
// alone, and so is GOMEMLIMIT.
func TestTuneGCKeepsGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "300MiB")
	debug.SetGCPercent(150)         // as the runtime set them from the environment
	debug.SetMemoryLimit(300 << 20) //
	defer tuneGC(slog.New(slog.DiscardHandler), func() uint64 { return 0 })()
	runtime.GC()
	if p := gogc(); p != 150 {
		t.Errorf("with GOGC=150 the GC percent is %d", p)
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("with GOMEMLIMIT=300MiB the memory limit is %d, want %d", got, 300<<20)
	}
}
