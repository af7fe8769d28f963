package a2aclient

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Calls counts the remote outbox's call attempts by outcome, as
// palaver_remote_calls_total.
type Calls struct{ attempts *prometheus.CounterVec }

// NewCalls returns Calls, registered in reg unless it is nil.
func NewCalls(reg prometheus.Registerer) (*Calls, error) {
	c := &Calls{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "palaver_remote_calls_total",
		Help: "Calls to remote A2A agents by outcome: delivered (answered, or refused for good: it is in the conversation), failed (no answer yet, or the task still works: asked again later), gave_up (a day without an answer: the conversation was told).",
	}, []string{"outcome"})}
	for _, o := range Outcomes {
		c.attempts.WithLabelValues(o) // every outcome shows, at 0 until it happens
	}
	if reg != nil {
		if err := reg.Register(c.attempts); err != nil {
			return nil, fmt.Errorf("register remote call metrics: %w", err)
		}
	}
	return c, nil
}

// Count adds n attempts with outcome (Remotes.Run reports each
// call's outcome through it, from several goroutines at once).
func (c *Calls) Count(outcome string, n int) {
	c.attempts.WithLabelValues(outcome).Add(float64(n))
}
