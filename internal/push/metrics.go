package push

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Counter counts the notification attempts by outcome:
// palaver_notifications_total{outcome} (sent, failed, dropped).
type Counter struct{ c *prometheus.CounterVec }

// outcomeNames are the metric's words for the outcomes.
var outcomeNames = map[string]string{Sent: "sent", Failed: "failed", Dropped: "dropped"}

// NewCounter makes the counter, registered in reg (nil: none).
func NewCounter(reg prometheus.Registerer) (*Counter, error) {
	c := &Counter{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "palaver_notifications_total",
		Help: "Owner notification attempts by outcome: sent (taken by the push service or ntfy), failed (retried later), dropped (given up, or the subscription was gone).",
	}, []string{"outcome"})}
	for _, o := range Outcomes {
		c.c.WithLabelValues(outcomeNames[o]) // every outcome shows, at 0 until it happens
	}
	if reg != nil {
		if err := reg.Register(c.c); err != nil {
			return nil, fmt.Errorf("register notification metrics: %w", err)
		}
	}
	return c, nil
}

// Count adds one attempt with its outcome.
func (c *Counter) Count(outcome string) { c.c.WithLabelValues(outcomeNames[outcome]).Inc() }
