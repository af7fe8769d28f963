package push

import (
	"context"
	"net/netip"
	"time"

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
