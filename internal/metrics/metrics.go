// Package metrics serves the server's Prometheus metrics at GET /metrics
// (DESIGN.md §14): the Go runtime (goroutines, memory, GC pauses), the
// process (CPU, resident memory, open files), HTTP requests by status, and
// what the hub observes (HubObserver): sends, brakes, parked waits and
// wake-up latency; and the store's commits and the pages they wrote.
package metrics

import (
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/palaverhq/palaver/internal/hub"
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

// HubObserver counts what the hub tells its Observer (§14):
// palaver_sends_total{outcome}, palaver_brakes_tripped_total{word},
// palaver_parked_waits and palaver_wake_seconds. Every outcome and brake
// the hub names is a series from the start, at 0, and is counted without
// allocating: a send costs one atomic add.
type HubObserver struct {
	sends, brakes     *prometheus.CounterVec
	sendsBy, brakesBy map[string]prometheus.Counter // the hub's own words, resolved once
	parked            prometheus.Gauge
	wake, search      prometheus.Histogram
}

var _ hub.Observer = (*HubObserver)(nil)

// NewHubObserver makes the hub's series and registers them with reg.
func NewHubObserver(reg prometheus.Registerer) (*HubObserver, error) {
	o := &HubObserver{
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palaver_sends_total",
			Help: "Agents' sends (send_message and the profiles' equivalents) by outcome: sent, held for review, denied by a rule, or error.",
		}, []string{"outcome"}),
		brakes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palaver_brakes_tripped_total",
			Help: "Agents' sends refused by a brake, by the brake's word (" + strings.Join(hub.BrakeWords(), ", ") + ").",
		}, []string{"word"}),
		parked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "palaver_parked_waits",
			Help: "Waits (wait_for_messages, people's event streams) parked now, waiting for an event.",
		}),
		wake: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "palaver_wake_seconds",
			Help:    "From the commit of an event (a send) to the wake-up of a wait parked for it, on the replica that committed it.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		search: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "palaver_search_seconds",
			Help:    "How long each search took in the hub (an agent's search_messages, a person's on REST or the dashboard).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		sendsBy:  map[string]prometheus.Counter{},
		brakesBy: map[string]prometheus.Counter{},
	}
	for _, outcome := range hub.SendOutcomes {
		o.sendsBy[outcome] = o.sends.WithLabelValues(outcome)
	}
	for _, word := range hub.BrakeWords() {
		o.brakesBy[word] = o.brakes.WithLabelValues(word)
	}
	for _, c := range []prometheus.Collector{o.sends, o.brakes, o.parked, o.wake, o.search} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Sent counts a send by its outcome.
func (o *HubObserver) Sent(outcome string) { count(o.sendsBy, o.sends, outcome) }

// BrakeTripped counts a send a brake refused, by the brake's word.
func (o *HubObserver) BrakeTripped(word string) { count(o.brakesBy, o.brakes, word) }

// Parked moves the gauge of parked waits.
func (o *HubObserver) Parked(delta int) { o.parked.Add(float64(delta)) }

// Woke records how long after a commit a parked wait woke.
func (o *HubObserver) Woke(after time.Duration) { o.wake.Observe(after.Seconds()) }

// Searched observes how long a search took.
func (o *HubObserver) Searched(took time.Duration) { o.search.Observe(took.Seconds()) }

// count adds one to the series of label: resolved at start for the hub's
// own words, looked up for any other.
func count(known map[string]prometheus.Counter, vec *prometheus.CounterVec, label string) {
	if c, ok := known[label]; ok {
		c.Inc()
		return
	}
	vec.WithLabelValues(label).Inc()
}

// Writer is a store that counts its commits and the pages they wrote
// (store.DB.Writes; pages only on SQLite), and the search indexer's
// commits of its own apart (IndexWrites).
type Writer interface {
	Writes() (commits, pages int64)
	IndexWrites() (commits, pages int64)
}

// RegisterWriter exports w's counts: palaver_store_commits_total and
// palaver_store_pages_written_total, whose ratio over a run of single
// sends is a send's write set (§17), and the search indexer's beside them.
func RegisterWriter(reg prometheus.Registerer, w Writer) error {
	commits := func(f func() (int64, int64)) func() float64 { return func() float64 { n, _ := f(); return float64(n) } }
	pages := func(f func() (int64, int64)) func() float64 { return func() float64 { _, n := f(); return float64(n) } }
	for _, c := range []struct {
		name, help string
		value      func() float64
	}{
		{"palaver_store_commits_total", "Transactions the store committed (on SQLite, the writer's group commits, each of one or more writes), the search indexer's own aside.", commits(w.Writes)},
		{"palaver_store_pages_written_total", "Database pages the SQLite writer's commits wrote to the WAL (0 on PostgreSQL), the search indexer's own commits aside.", pages(w.Writes)},
		{"palaver_store_index_commits_total", "The SQLite search indexer's commits of its own, after the sends' commits.", commits(w.IndexWrites)},
		{"palaver_store_index_pages_written_total", "Database pages the SQLite search indexer's commits of its own wrote to the WAL.", pages(w.IndexWrites)},
	} {
		if err := reg.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help}, c.value)); err != nil {
			return err
		}
	}
	return nil
}
