package peer

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCall: one call of a fetch-sized reply (700 bytes of payload
// each way, a follower's fetch carrying a few records), over a peer
// stream and over HTTP, client and server in this process. cpu-µs/op is
// the CPU time of both sides per call.
func BenchmarkCall(b *testing.B) {
	secret, err := NewSecret("correct horse battery staple")
	if err != nil {
		b.Fatal(err)
	}
	servers := map[string]func(testing.TB, Secret) string{
		"stream": startPeer,
		"http":   func(t testing.TB, s Secret) string { addr, _ := startHTTPOnlyPeer(t, s); return addr },
	}
	for _, callers := range []int{1, 16} {
		for _, transport := range []string{"stream", "http"} {
			b.Run(fmt.Sprintf("callers=%d/transport=%s", callers, transport), func(b *testing.B) {
				addr := servers[transport](b, secret)
				c := NewClient(secret)
				defer c.Close()
				req := payloadReq{Count: 3, Records: make([]byte, 700)}
				ctx := context.Background()
				b.SetParallelism(callers)
				cpu0 := processCPU()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := Call(ctx, c, addr, opPayload, req); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
