// Package metrics serves the server's Prometheus metrics at GET /metrics
// (DESIGN.md §14): the Go runtime (goroutines, memory, GC pauses), the
// process (CPU, resident memory, open files) and HTTP requests by status.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one server's registry. It is made per server, not global, so
// tests and several servers in one process do not share counters.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
}

// New returns a registry holding the Go runtime and process collectors and
// palaver_http_requests_total{code}.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palaver_http_requests_total",
			Help: "HTTP requests answered, by status code.",
		}, []string{"code"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests,
	)
	return m
}

// Registry is where other parts of the server add their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Count wraps next, counting each request it answers in
// palaver_http_requests_total by status code (200 when next writes none).
// Streaming responses keep working: the wrapper passes Flush through.
func (m *Metrics) Count(next http.Handler) http.Handler {
	return promhttp.InstrumentHandlerCounter(m.requests, next)
}

// Mount registers GET /metrics on mux and returns mux wrapped in Count, to
// be served in its place.
func (m *Metrics) Mount(mux *http.ServeMux) http.Handler {
	mux.Handle("GET /metrics", m.Handler())
	return m.Count(mux)
}
