package push

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/hub"
)

// Notifier delivers the hub's notifications (hub.Notifier): each as Web
// Push or an ntfy publish, by its target's kind.
type Notifier struct{ Sender *Sender }

// webPushTTL is how long a push service keeps a notification for a
// browser that is not connected.
const webPushTTL = 24 * time.Hour

// Notify sends n to its target.
func (t Notifier) Notify(ctx context.Context, n *hub.Notification, allow func(netip.Addr) bool) hub.NotifyResult {
	p := n.Payload
	msg := Notification{ID: n.Item, Title: p.Title, Summary: p.Summary, Priority: PriorityNormal, Tags: p.Tags}
	if p.Urgent {
		msg.Priority = PriorityHigh
	}
	if n.BaseURL != "" {
		msg.Link = n.Link()
		if p.Action != "" {
			msg.Action = &Action{Label: p.Action, URL: msg.Link}
		}
	}
	msg.ID = key(n.Item)
	var r Result
	switch n.To.Kind {
	case hub.TargetWebPush:
		r = t.Sender.SendWebPush(ctx, WebPush{
			Subscription: Subscription{Endpoint: n.To.URL, P256dh: n.To.P256dh, Auth: n.To.Auth},
			VAPID:        VAPIDKeys{Public: n.VAPIDPublic, Private: n.VAPIDPrivate},
			Subject:      n.VAPIDSubject, TTL: webPushTTL,
		}, msg, allow)
	default:
		r = t.Sender.PublishNtfy(ctx, NtfyTarget{URL: n.To.URL, Token: n.To.Token}, msg, allow)
	}
	return hub.NotifyResult{Status: r.Status, Gone: r.Gone, Err: r.Err}
}

// Counter counts the hub's notification attempts by outcome:
// palaver_notifications_total{outcome} (sent, failed, dropped).
type Counter struct{ c *prometheus.CounterVec }

// outcomeNames are the metric's words for the hub's outcomes.
var outcomeNames = map[string]string{hub.NotifySent: "sent", hub.NotifyFailed: "failed", hub.NotifyDropped: "dropped"}

// NewCounter makes the counter, registered in reg (nil: none).
func NewCounter(reg prometheus.Registerer) (*Counter, error) {
	c := &Counter{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "palaver_notifications_total",
		Help: "Owner notification attempts by outcome: sent (taken by the push service or ntfy), failed (retried later), dropped (given up, or the subscription was gone).",
	}, []string{"outcome"})}
	for _, o := range hub.NotifyOutcomes {
		c.c.WithLabelValues(outcomeNames[o]) // every outcome shows, at 0 until it happens
	}
	if reg != nil {
		if err := reg.Register(c.c); err != nil {
			return nil, fmt.Errorf("register notification metrics: %w", err)
		}
	}
	return c, nil
}

// Count adds one attempt with the hub's outcome.
func (c *Counter) Count(outcome string) { c.c.WithLabelValues(outcomeNames[outcome]).Inc() }
