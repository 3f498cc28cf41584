package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkProduceHandler measures one single-record produce through the
// handler, without the network.
func BenchmarkProduceHandler(b *testing.B) {
	n := startSingle(b, nodeOptions{})
	n.expect(b, "POST", "/topics", `{"name":"bench","partitions":8}`, 201)
	h := n.srv.Config.Handler
	body := `{"topic":"bench","message":"` + strings.Repeat("x", 100) + `"}`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/produce", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
}

// BenchmarkFetchHandler measures fetching 1000 records of 100 bytes.
func BenchmarkFetchHandler(b *testing.B) {
	n := startSingle(b, nodeOptions{})
	n.expect(b, "POST", "/topics", `{"name":"bench","partitions":1}`, 201)
	var recs []string
	for i := 0; i < 1000; i++ {
		recs = append(recs, `{"value":"`+strings.Repeat("x", 100)+`"}`)
	}
	for i := 0; i < 10; i++ {
		n.expect(b, "POST", "/produce", `{"topic":"bench","partition":0,"records":[`+strings.Join(recs, ",")+`]}`, 200)
	}
	h := n.srv.Config.Handler
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("GET", "/fetch?topic=bench&partition=0&offset=0&max_records=1000", nil)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkProduceBatchHandler measures one 1000-record keyless batch.
func BenchmarkProduceBatchHandler(b *testing.B) {
	n := startSingle(b, nodeOptions{})
	n.expect(b, "POST", "/topics", `{"name":"bench","partitions":8}`, 201)
	var recs []string
	for i := 0; i < 1000; i++ {
		recs = append(recs, `{"value":"`+strings.Repeat("x", 100)+`"}`)
	}
	body := `{"topic":"bench","records":[` + strings.Join(recs, ",") + `]}`
	h := n.srv.Config.Handler
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/produce", strings.NewReader(body))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d: %s", w.Code, w.Body)
			}
		}
	})
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkFetchHandlerCompressed is BenchmarkFetchHandler on a topic
// whose compression.type stores the records as lz4 or zstd batches (none
// for comparison): each fetch decompresses ten 100-record batches. The
// values are text, so the codecs have something to compress.
func BenchmarkFetchHandlerCompressed(b *testing.B) {
	for _, codec := range []string{"uncompressed", "lz4", "zstd"} {
		b.Run(codec, func(b *testing.B) {
			n := startSingle(b, nodeOptions{})
			n.expect(b, "POST", "/topics", `{"name":"bench","partitions":1,"config":{"compression.type":"`+codec+`"}}`, 201)
			for i := 0; i < 10; i++ {
				var recs []string
				for j := 0; j < 100; j++ {
					recs = append(recs, fmt.Sprintf(`{"key":"user-%d","value":"order %d of user %d: created, paid and shipped to the usual address"}`, j%7, i*100+j, j%7))
				}
				n.expect(b, "POST", "/produce", `{"topic":"bench","partition":0,"records":[`+strings.Join(recs, ",")+`]}`, 200)
			}
			h := n.srv.Config.Handler
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest("GET", "/fetch?topic=bench&partition=0&offset=0&max_records=1000", nil)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
}
