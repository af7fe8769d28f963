package push

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// Sending owner notifications (§19): the hub queues them with the events
// they tell of, and rings its NotifyKick; an outbox dispatcher
// (internal/outbox) sends them, each device or topic a target of its own,
// so that a slow or dead one delays no other. A delivered notification
// keeps its row, marked sent; a subscription its push service says is
// gone is removed; other failures retry on Retry, and one failing past it
// is dropped. A crash loses none (each is committed with its event) and
// sends none twice that had not gone out; one cut off between its send
// and its marking (the receiver took it, the process died) is sent again
// once its lease ends — at least once, by design — with the same ID, so
// the receiver replaces the first (Web Push's Topic, ntfy's sequence_id).

// The outbox's numbers (§19).
const (
	LogSize     = 50               // lines kept in each person's delivery log
	SendTimeout = 10 * time.Second // one send
	lease       = 2 * time.Minute
	batch       = 100
)

// Retry is how a failing notification is retried: a few seconds, then
// longer, for six hours, after which it is dropped.
var Retry = outbox.Backoff{First: 5 * time.Second, Max: 30 * time.Minute, Jitter: 0.2, For: 6 * time.Hour}

// What became of a notification's attempt: the values of
// palaver_notifications_total{outcome}.
const (
	Sent    = outbox.Delivered
	Failed  = outbox.Failed
	Dropped = outbox.GaveUp // given up, or its subscription is gone
)

// Outcomes lists every outcome.
var Outcomes = []string{Sent, Failed, Dropped}

// limits are what each target is given.
var limits = outbox.Limits{Concurrency: 4, Rate: 5, Burst: 10, Lease: lease, Batch: batch, Retry: Retry}

// MetaVAPID keeps the server's VAPID key pair in the database, as
// "public.private", where every replica reads the same one.
const MetaVAPID = "vapid_keys"

// EnsureKeys makes the server's VAPID key pair on its first start and
// keeps it in the database; a later start, or another replica, finds it
// there (palaver serve calls it before serving). Replicas starting
// together on a new database may each make a pair: only the first written
// is kept, and every one of them sends with that.
func (k *Notices) EnsureKeys(ctx context.Context) error {
	err := k.store.Update(ctx, func(tx hub.Tx) error {
		v, err := tx.Meta(ctx, MetaVAPID)
		if err != nil || v != "" {
			return err
		}
		keys, err := NewVAPIDKeys()
		if err != nil {
			return err
		}
		return tx.InitMeta(ctx, MetaVAPID, keys.Public+"."+keys.Private)
	})
	if err != nil {
		return hub.AsError(err)
	}
	return nil
}

// keys is the key pair as the database keeps it now.
func (k *Notices) keys(ctx context.Context) (VAPIDKeys, error) {
	v, err := k.store.Meta(ctx, MetaVAPID)
	if err != nil {
		return VAPIDKeys{}, hub.AsError(err)
	}
	pub, priv, _ := strings.Cut(v, ".")
	return VAPIDKeys{Public: pub, Private: priv}, nil
}

// VAPIDPublicKey is what a browser subscribes with (applicationServerKey).
func (k *Notices) VAPIDPublicKey(ctx context.Context) (string, error) {
	keys, err := k.keys(ctx)
	return keys.Public, err
}

// claimed is a notification claimed to send, with what it is sent with:
// the server's VAPID keys and subject, and the dashboard's URL its links
// are under.
type claimed struct {
	*hub.Notification
	keys    VAPIDKeys
	subject string
	base    string
}

// link is the absolute URL of the page a notification opens.
func (c *claimed) link() string { return strings.TrimRight(c.base, "/") + c.Payload.Path }

// newOutbox is the dispatcher of the notifications, stepping when the hub
// rings its NotifyKick.
func (k *Notices) newOutbox() *outbox.Dispatcher[*claimed, hub.NotifyAttempt] {
	o := &outbox.Dispatcher[*claimed, hub.NotifyAttempt]{Name: "notifications", Limits: limits, Now: k.hub.Now, Log: k.log,
		Kick: k.hub.NotifyKick()}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := k.store.DueNotifyTargets(ctx, now)
		if err != nil {
			return nil, hub.AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*claimed, error) {
		ns, err := hub.ClaimEach(ctx, k.store, want, func(tx hub.Tx, targetID string, n int) ([]*hub.Notification, error) {
			return tx.ClaimNotifications(ctx, targetID, now, until, n)
		})
		if err != nil {
			return nil, err
		}
		if len(ns) == 0 {
			return nil, nil
		}
		keys, err := k.keys(ctx)
		if err != nil {
			return nil, err
		}
		base, _ := k.hub.PublicURL(ctx)
		subject := k.subject
		if subject == "" && strings.HasPrefix(base, "https://") {
			subject = base
		}
		out := make([]*claimed, 0, len(ns))
		for _, n := range ns {
			out = append(out, &claimed{Notification: n, keys: keys, subject: subject, base: base})
		}
		return out, nil
	}
	o.Send = k.send
	o.Record = k.record
	return o
}

// webPushTTL is how long a push service keeps a notification for a
// browser that is not connected.
const webPushTTL = 24 * time.Hour

// notify sends c to its target, as Web Push or an ntfy publish by the
// target's kind, connecting to no address allow refuses.
func (k *Notices) notify(ctx context.Context, c *claimed, allow func(netip.Addr) bool) Result {
	p := c.Payload
	msg := Notification{ID: key(c.Item), Title: p.Title, Summary: p.Summary, Priority: PriorityNormal, Tags: p.Tags}
	if p.Urgent {
		msg.Priority = PriorityHigh
	}
	if c.base != "" {
		msg.Link = c.link()
		if p.Action != "" {
			msg.Action = &Action{Label: p.Action, URL: msg.Link}
		}
	}
	if c.To.Kind == hub.TargetWebPush {
		return k.sender.SendWebPush(ctx, WebPush{
			Subscription: Subscription{Endpoint: c.To.URL, P256dh: c.To.P256dh, Auth: c.To.Auth},
			VAPID:        c.keys, Subject: c.subject, TTL: webPushTTL,
		}, msg, allow)
	}
	return k.sender.PublishNtfy(ctx, NtfyTarget{URL: c.To.URL, Token: c.To.Token}, msg, allow)
}

// send sends one claimed notification within SendTimeout, connecting only
// to addresses the hub's AllowFetch lets through for its host.
func (k *Notices) send(ctx context.Context, c *claimed, at time.Time) hub.NotifyAttempt {
	host := ""
	if u, err := url.Parse(c.To.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, SendTimeout)
	res := k.notify(sctx, c, func(ip netip.Addr) bool { return k.hub.AllowFetch(host, ip) })
	cancel()
	a := hub.NotifyAttempt{ID: hub.NewID(hub.IDNotifyLog, at), UserID: c.UserID, TargetID: c.TargetID, NotificationID: c.ID, Kind: c.Kind, At: at, Status: res.Status}
	switch {
	case res.Gone:
		a.Error = goneError
	case res.Err != nil:
		a.Status, a.Error = 0, hub.Preview(hub.CleanText(res.Err.Error()), hub.CallError)
	}
	return a
}

// goneError is the log's word for a subscription its push service no
// longer has.
const goneError = "the push service no longer has this subscription; it was removed"

// record logs an attempt and does what its outcome says: sent, the
// notification is marked sent; gone, its subscription is removed; failed,
// it is due again at retry; given up, it is dropped.
func (k *Notices) record(ctx context.Context, c *claimed, a hub.NotifyAttempt, outcome string, retry time.Time) error {
	err := k.store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.InsertNotifyAttempt(ctx, &a, LogSize); err != nil {
			return err
		}
		switch {
		case a.Error == goneError:
			return tx.DeleteNotifyTarget(ctx, c.TargetID)
		case outcome == Sent:
			return tx.MarkNotificationSent(ctx, c.ID, a.At)
		case outcome == Failed:
			r := *c.Notification
			r.Attempts, r.DueAt = c.Attempts+1, retry
			return tx.RescheduleNotification(ctx, &r)
		}
		return tx.MarkNotificationSent(ctx, c.ID, a.At) // dropped: done with, never tried again
	})
	if err != nil {
		return hub.AsError(err)
	}
	return nil
}

// Deliver is one delivery step, for tests and tools: it claims the
// notifications that are due, sends them, and returns once they ended.
// Notices with no Sender send nothing.
func (k *Notices) Deliver(ctx context.Context) (hub.Pass, error) {
	if k.sender == nil {
		return hub.Pass{Outcomes: map[string]int{}}, nil
	}
	return hub.DeliverOnce(ctx, k.outbox.Dispatch)
}

// Run sends notifications until ctx ends (palaver serve runs it); no
// target waits for another's. Steps come at once when a change of the hub
// queued some, and every period otherwise. count, when not nil, hears
// each attempt's outcome.
func (k *Notices) Run(ctx context.Context, period time.Duration, count func(outcome string)) {
	if k.sender == nil {
		<-ctx.Done()
		return
	}
	k.outbox.Run(ctx, period, count)
}

// Test queues one notification of kind test to each of the person's
// devices and topics, through the outbox as any other: it is due at once,
// whatever kinds they chose and in their quiet hours too, since they
// asked for it. It returns how many it queued; with no device or topic it
// is refused.
func (k *Notices) Test(ctx context.Context, u *hub.User) (int, error) {
	now := k.hub.Now()
	item := hub.NotifyTest + ":" + hub.NewID(hub.IDNotification, now) // every test is an item of its own
	payload := hub.NotifyPayload{Title: "A test from Palaver", Summary: "Notifications reach you here.", Path: "/settings#notify", Tags: []string{"white_check_mark"}}
	var n int
	err := k.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		ts, err := tx.NotifyTargets(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			return nil, hub.Invalid("no_targets", "there is nowhere to send a test: add a device or an ntfy topic first, then send one")
		}
		var out []*hub.Notification
		for _, t := range ts {
			out = append(out, &hub.Notification{ID: hub.NewID(hub.IDNotification, now), TargetID: t.ID, UserID: u.ID, Kind: hub.NotifyTest, Item: item,
				Payload: payload, CreatedAt: now, DueAt: now})
		}
		n = len(out)
		return nil, tx.InsertNotifications(ctx, out)
	})
	if err != nil {
		return 0, err
	}
	k.outbox.Wake()
	return n, nil
}
