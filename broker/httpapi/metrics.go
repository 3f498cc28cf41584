package httpapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kairolog/kairolog/broker/memory"
)

// metrics are the HTTP layer's own series; the broker's Collector adds the
// partition, log and group gauges.
type metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	unrouted      prometheus.Counter
	bytesOut      prometheus.Counter
	producedRecs  prometheus.Counter
	producedBytes prometheus.Counter
	fetchedRecs   prometheus.Counter
	fetchedBytes  prometheus.Counter
	panics        prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kairo_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kairo_http_request_duration_seconds",
			Help:    "HTTP request latency by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		unrouted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_http_unrouted_requests_total", Help: "Requests for no endpoint (404, 405).",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_http_response_bytes_total", Help: "Bytes of HTTP response bodies.",
		}),
		producedRecs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_produce_records_total", Help: "Records accepted by produce requests.",
		}),
		producedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_produce_bytes_total", Help: "Key, value and header bytes accepted by produce requests (bytes in).",
		}),
		fetchedRecs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_fetch_records_total", Help: "Records returned by fetch requests.",
		}),
		fetchedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_fetch_bytes_total", Help: "Key, value and header bytes returned by fetch requests (bytes out).",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kairo_http_panics_total", Help: "Handler panics answered with 500 (bugs).",
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.unrouted, m.bytesOut, m.producedRecs,
		m.producedBytes, m.fetchedRecs, m.fetchedBytes, m.panics)
	return m
}

// registerMemoryMetrics exposes the broker's memory pools: their bound,
// what is charged now, and the charges refused (503 BROKER_BUSY).
func registerMemoryMetrics(reg prometheus.Registerer, budget memory.Budget) {
	for name, p := range map[string]*memory.Pool{"requests": budget.Requests, "responses": budget.Responses} {
		labels := prometheus.Labels{"pool": name}
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kairo_memory_pool_bytes", ConstLabels: labels,
				Help: "Bound of a request memory pool (queued.max.request.bytes, queued.max.response.bytes)."},
				func() float64 { return float64(p.Size()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kairo_memory_pool_in_use_bytes", ConstLabels: labels,
				Help: "Bytes of a request memory pool that requests hold now."},
				func() float64 { return float64(p.InUse()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kairo_memory_pool_refused_total", ConstLabels: labels,
				Help: "Requests refused with 503 BROKER_BUSY because the pool was in use."},
				func() float64 { return float64(p.Refused()) }),
		)
	}
}

// newRegistry is a registry with the Go runtime and process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// route is one registered endpoint with its pre-resolved metric children, so
// the data path does no label lookups for the latency histogram.
type route struct {
	name     string
	dataPath bool // produce, fetch, group heartbeats: logged at debug level
	quiet    bool // health, ready, metrics: not logged when they succeed
	// needsMetadata routes wait for the broker's metadata to catch up
	// (Broker.AwaitMetadata) before their handler runs: all but the
	// probes, /metrics and the broker-to-broker paths.
	needsMetadata bool
	// open routes answer without authentication: the probes and
	// /metrics, which kubelet and Prometheus call without credentials.
	open     bool
	requests *prometheus.CounterVec
	duration prometheus.Observer
	ok       prometheus.Counter
}

func (rt *route) observe(status int, d time.Duration) {
	rt.duration.Observe(d.Seconds())
	if status == 200 || status == 0 {
		rt.ok.Inc()
		return
	}
	rt.requests.WithLabelValues(strconv.Itoa(status)).Inc()
}
