package hub

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// Sending owner notifications (§19): each target a target of its own in
// an outbox dispatcher; a delivered notification keeps its row, marked
// sent; a subscription its push service says is gone is removed; other
// failures retry on NotifyRetry, and one failing past it is dropped.

// VAPIDKeys are the server's Web Push key pair (RFC 8292), each half in
// unpadded URL-safe base64: Public the 65-byte uncompressed point the
// browser is given as applicationServerKey, Private the 32-byte scalar.
type VAPIDKeys struct{ Public, Private string }

// MetaVAPID keeps the key pair, as "public.private".
const MetaVAPID = "vapid_keys"

// ensureVAPID makes the key pair on the first start and keeps it in the
// database, where every replica reads the same one.
func (h *Hub) ensureVAPID(ctx context.Context) error {
	err := h.store.Update(ctx, func(tx Tx) error {
		v, err := tx.Meta(ctx, MetaVAPID)
		if err != nil || v != "" {
			return err
		}
		k, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		return tx.SetMeta(ctx, MetaVAPID, base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes())+"."+
			base64.RawURLEncoding.EncodeToString(k.Bytes()))
	})
	if err != nil {
		return AsError(err)
	}
	return nil
}

// readVAPID is the key pair as the database keeps it now.
func (h *Hub) readVAPID(ctx context.Context) (VAPIDKeys, error) {
	v, err := h.store.Meta(ctx, MetaVAPID)
	if err != nil {
		return VAPIDKeys{}, AsError(err)
	}
	pub, priv, _ := strings.Cut(v, ".")
	return VAPIDKeys{Public: pub, Private: priv}, nil
}

// VAPIDPublicKey is what a browser subscribes with (applicationServerKey).
func (h *Hub) VAPIDPublicKey(ctx context.Context) (string, error) {
	k, err := h.readVAPID(ctx)
	return k.Public, err
}

// notifyOutbox dispatches the hub's notifications.
type notifyOutbox = outbox.Dispatcher[*Notification, NotifyAttempt]

func (h *Hub) newNotifyOutbox() *notifyOutbox {
	o := &notifyOutbox{Name: "notifications", Limits: notifyLimits, Now: h.now, Log: h.log}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := h.store.DueNotifyTargets(ctx, now)
		if err != nil {
			return nil, AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*Notification, error) {
		var ns []*Notification
		err := h.store.Update(ctx, func(tx Tx) error {
			ns = nil
			for id, n := range want {
				got, err := tx.ClaimNotifications(ctx, id, now, until, n)
				if err != nil {
					return err
				}
				ns = append(ns, got...)
			}
			return nil
		})
		if err != nil {
			return nil, AsError(err)
		}
		if len(ns) > 0 {
			keys, err := h.readVAPID(ctx)
			if err != nil {
				return nil, err
			}
			base, _ := h.PublicURL(ctx)
			subject := h.vapidSubject
			if subject == "" && strings.HasPrefix(base, "https://") {
				subject = base
			}
			for _, n := range ns {
				n.VAPIDPublic, n.VAPIDPrivate, n.VAPIDSubject, n.BaseURL = keys.Public, keys.Private, subject, base
			}
		}
		return ns, nil
	}
	o.Send = h.sendNotification
	o.Record = h.recordNotification
	return o
}

// sendNotification sends one claimed notification within NotifyTimeout,
// connecting only to addresses AllowFetch lets through for its host.
func (h *Hub) sendNotification(ctx context.Context, n *Notification, at time.Time) NotifyAttempt {
	host := ""
	if u, err := url.Parse(n.To.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, NotifyTimeout)
	res := h.notifier.Notify(sctx, n, func(ip netip.Addr) bool { return h.AllowFetch(host, ip) })
	cancel()
	a := NotifyAttempt{ID: NewID(IDNotifyLog, at), UserID: n.UserID, TargetID: n.TargetID, NotificationID: n.ID, Kind: n.Kind, At: at, Status: res.Status}
	switch {
	case res.Gone:
		a.Error = goneError
	case res.Err != nil:
		a.Status, a.Error = 0, Preview(cleanText(res.Err.Error()), CallError)
	}
	return a
}

// goneError is the log's word for a subscription its push service no
// longer has.
const goneError = "the push service no longer has this subscription; it was removed"

// recordNotification logs an attempt and does what its outcome says:
// sent, the notification is marked sent; gone, its subscription is
// removed; failed, it is due again at retry; given up, it is dropped.
func (h *Hub) recordNotification(ctx context.Context, n *Notification, a NotifyAttempt, outcome string, retry time.Time) error {
	err := h.store.Update(ctx, func(tx Tx) error {
		if err := tx.InsertNotifyAttempt(ctx, &a, NotifyLogSize); err != nil {
			return err
		}
		switch {
		case a.Error == goneError:
			return tx.DeleteNotifyTarget(ctx, n.TargetID)
		case outcome == NotifySent:
			return tx.MarkNotificationSent(ctx, n.ID, a.At)
		case outcome == NotifyFailed:
			r := *n
			r.Attempts, r.DueAt = n.Attempts+1, retry
			return tx.RescheduleNotification(ctx, &r)
		}
		return tx.MarkNotificationSent(ctx, n.ID, a.At) // dropped: done with, never tried again
	})
	if err != nil {
		return AsError(err)
	}
	return nil
}

// DeliverNotifications is one delivery step, for tests and tools: it
// claims the notifications that are due, sends them, and returns once
// they ended. A hub with no Notifier sends nothing.
func (h *Hub) DeliverNotifications(ctx context.Context) (Pass, error) {
	if h.notifier == nil {
		return Pass{Outcomes: map[string]int{}}, nil
	}
	return deliverOnce(ctx, h.notes.Dispatch)
}

// RunNotifications sends notifications until ctx ends (palaver serve runs
// it); no target waits for another's. count, when not nil, hears each
// attempt's outcome.
func (h *Hub) RunNotifications(ctx context.Context, period time.Duration, count func(outcome string)) {
	if h.notifier == nil {
		<-ctx.Done()
		return
	}
	h.notes.Run(ctx, period, count)
}

// kickNotifications asks for a delivery step now.
func (h *Hub) kickNotifications() { h.notes.Wake() }

// NotifyLog is the person's delivery log, newest first.
func (h *Hub) NotifyLog(ctx context.Context, u *User) ([]NotifyAttempt, error) {
	l, err := h.store.NotifyAttempts(ctx, u.ID, NotifyLogSize)
	if err != nil {
		return nil, AsError(err)
	}
	return l, nil
}
