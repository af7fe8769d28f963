package push

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// Owner notifications' management (§19): the devices and ntfy topics a
// person is told on with the kinds that tell them on each, their quiet
// hours and time zone, the delivery log and the key a browser subscribes with. What a
// notification says and when it is due is decided by the hub, in the
// transaction that stores the events it tells of; Notices send what it
// queued (outbox.go).

// The notifications' numbers (§19).
const (
	MaxTargets = 10  // devices and topics per person
	maxPushKey = 200 // characters of a subscription's keys
	maxLabel   = 100 // characters of a target's label
	maxToken   = 200 // characters of an ntfy access token
)

// Store is what Notices read and write.
type Store interface {
	hub.NotifyReads
	hub.MetaReads
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
}

// Notices are the people's owner notifications over the hub and its
// store: the faces decode, call one of their methods, and render; palaver
// serve makes the server's VAPID key pair (EnsureKeys) and runs their
// outbox (Run).
type Notices struct {
	hub     *hub.Hub // its clock, its egress policy, its public URL
	store   Store
	sender  *Sender // nil: notifications are queued but none is sent here
	subject string
	log     *slog.Logger
	outbox  *outbox.Dispatcher[*claimed, hub.NotifyAttempt]
}

// NoticesOptions configure NewNotices.
type NoticesOptions struct {
	Hub   *hub.Hub
	Store Store // the hub's store
	// Sender sends the notifications; nil: the hub queues them but these
	// Notices send none (an admin command; the server sends them).
	Sender *Sender
	// Subject is whom push services may contact about this server (a
	// mailto: or https: URL), sent with every Web Push; "" is the
	// server's public URL when it is https.
	Subject string
	Logger  *slog.Logger
}

// NewNotices returns the owner notifications of the hub's people.
func NewNotices(o NoticesOptions) *Notices {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	k := &Notices{hub: o.Hub, store: o.Store, sender: o.Sender, subject: o.Subject, log: o.Logger}
	k.outbox = k.newOutbox()
	return k
}

// SetTimeZone sets the time zone the person's quiet hours are read in: an
// IANA name, or "" for UTC.
func (k *Notices) SetTimeZone(ctx context.Context, u *hub.User, name string) error {
	name = strings.TrimSpace(name)
	if _, err := hub.LoadLocation(name); err != nil {
		return err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.SetUserTimeZone(ctx, u.ID, name) }); err != nil {
		return hub.AsError(err)
	}
	u.TimeZone = name
	return nil
}

// Prefs are the person's quiet hours (none until they choose).
func (k *Notices) Prefs(ctx context.Context, u *hub.User) (hub.NotifyPrefs, error) {
	p, err := k.store.NotifyPrefs(ctx, u.ID)
	if errors.Is(err, hub.ErrNoRows) {
		return hub.NotifyPrefs{}, nil
	}
	if err != nil {
		return hub.NotifyPrefs{}, hub.AsError(err)
	}
	return p, nil
}

// checkKinds returns the kinds chosen in hub.NotifyKinds' order, each
// once, or says which is not a kind and what the kinds are.
func checkKinds(chosen []string) ([]string, error) {
	for _, kind := range chosen {
		if !slices.Contains(hub.NotifyKinds, kind) {
			return nil, hub.Invalid("", "%q is not a kind of notification; choose from %s", hub.Echo(kind), strings.Join(hub.NotifyKinds, ", "))
		}
	}
	kinds := []string{}
	for _, kind := range hub.NotifyKinds {
		if slices.Contains(chosen, kind) {
			kinds = append(kinds, kind)
		}
	}
	return kinds, nil
}

// checkQuiet says what is wrong with quiet hours: they are minutes within
// a day.
func checkQuiet(p hub.NotifyPrefs) error {
	for _, m := range []int{p.QuietFrom, p.QuietTo} {
		if m < 0 || m >= 24*60 {
			return hub.Invalid("", "quiet hours are times of day from 00:00 to 23:59; %d minutes after midnight is not one", m)
		}
	}
	return nil
}

// SetPrefs stores the person's quiet hours, the same on every device and
// topic.
func (k *Notices) SetPrefs(ctx context.Context, u *hub.User, p hub.NotifyPrefs) (hub.NotifyPrefs, error) {
	if err := checkQuiet(p); err != nil {
		return hub.NotifyPrefs{}, err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.SetNotifyPrefs(ctx, u.ID, p) }); err != nil {
		return hub.NotifyPrefs{}, hub.AsError(err)
	}
	return p, nil
}

// Targets lists the person's devices and topics, oldest first.
func (k *Notices) Targets(ctx context.Context, u *hub.User) ([]*hub.NotifyTarget, error) {
	ts, err := k.store.NotifyTargets(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return ts, nil
}

// checkURL returns a push endpoint's or ntfy topic's URL as it is kept,
// or says what is wrong with it, as for webhooks (hub.CheckOutboundURL).
func (k *Notices) checkURL(ctx context.Context, what, raw string) (string, error) {
	return k.hub.CheckOutboundURL(ctx, raw, hub.Outbound{What: what, Example: "https://ntfy.sh/my-topic", Sent: "notifications are sent",
		UserInfo: "give an access token on its own instead", Reach: "notifications go only to"})
}

// checkPushKey checks one of a subscription's keys: base64url of n bytes.
func checkPushKey(name, s string, n int) (string, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(s) > maxPushKey || len(b) != n {
		return "", hub.Invalid("", "the subscription's %s key is not %d bytes in base64url; give the key the browser's PushSubscription has", name, n)
	}
	return s, nil
}

// addTarget stores a target, within the person's MaxTargets, told of
// hub.DefaultNotifyKinds until the person chooses; a browser subscribing
// again with the same endpoint replaces its keys and keeps its kinds.
func (k *Notices) addTarget(ctx context.Context, u *hub.User, t *hub.NotifyTarget) (*hub.NotifyTarget, error) {
	label, err := hub.CheckText("label", hub.CleanText(t.Label), 0, 1<<20)
	if err != nil {
		return nil, err
	}
	t.Label = hub.Preview(label, maxLabel)
	now := k.hub.Now()
	t.ID, t.UserID, t.CreatedAt, t.Kinds = hub.NewID(hub.IDNotifyTarget, now), u.ID, now, slices.Clone(hub.DefaultNotifyKinds)
	err = k.store.Update(ctx, func(tx hub.Tx) error {
		ts, err := tx.NotifyTargets(ctx, u.ID)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(ts, func(o *hub.NotifyTarget) bool { return o.URL == t.URL }); i >= 0 { // one at most: (user_id, url) is unique
			t.Kinds = ts[i].Kinds
			if err := tx.DeleteNotifyTarget(ctx, ts[i].ID); err != nil {
				return err
			}
			ts = slices.Delete(ts, i, i+1)
		}
		if len(ts) >= MaxTargets {
			return hub.Invalid("", "you have %d devices and topics already, the most a person may have; remove one first", MaxTargets)
		}
		return tx.InsertNotifyTarget(ctx, t)
	})
	if err != nil {
		return nil, hub.AsError(err)
	}
	return t, nil
}

// AddPushSubscription keeps a browser's Web Push subscription (§19): its
// endpoint at the push service, its p256dh (a P-256 public key, 65 bytes)
// and auth (16 bytes) keys, and a label (its user agent).
func (k *Notices) AddPushSubscription(ctx context.Context, u *hub.User, endpoint, p256dh, auth, label string) (*hub.NotifyTarget, error) {
	ep, err := k.checkURL(ctx, "push endpoint", endpoint)
	if err != nil {
		return nil, err
	}
	if p256dh, err = checkPushKey("p256dh", p256dh, 65); err != nil {
		return nil, err
	}
	if auth, err = checkPushKey("auth", auth, 16); err != nil {
		return nil, err
	}
	return k.addTarget(ctx, u, &hub.NotifyTarget{Kind: hub.TargetWebPush, URL: ep, P256dh: p256dh, Auth: auth, Label: label})
}

// AddNtfyTopic keeps an ntfy topic the person is told on (§19): its https
// URL on any ntfy server and an optional access token.
func (k *Notices) AddNtfyTopic(ctx context.Context, u *hub.User, topicURL, token, label string) (*hub.NotifyTarget, error) {
	tu, err := k.checkURL(ctx, "ntfy topic", topicURL)
	if err != nil {
		return nil, err
	}
	if p := strings.Trim(urlPath(tu), "/"); p == "" || strings.Contains(p, "/") {
		return nil, hub.Invalid("", "the ntfy topic URL %q names no topic; give the server and the topic, like https://ntfy.sh/my-topic", hub.Echo(tu))
	}
	token = strings.TrimSpace(token)
	if len(token) > maxToken || strings.ContainsAny(token, " \t\r\n") {
		return nil, hub.Invalid("", "the access token is not one ntfy makes (tk_… or a password, at most %d characters, no spaces)", maxToken)
	}
	if label == "" {
		label = tu
	}
	return k.addTarget(ctx, u, &hub.NotifyTarget{Kind: hub.TargetNtfy, URL: tu, Token: token, Label: label})
}

func urlPath(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Path
}

// target is one of the person's devices or topics, or not found.
func (k *Notices) target(ctx context.Context, u *hub.User, id string) (*hub.NotifyTarget, error) {
	t, err := k.store.NotifyTarget(ctx, id)
	if err == nil && t.UserID != u.ID {
		err = hub.ErrNoRows
	}
	if err != nil {
		return nil, hub.LookupErr(err, "you have no device or topic %q", hub.Echo(id))
	}
	return t, nil
}

// SetTargetKinds sets which kinds notify the person on one of their
// devices or topics: each one of hub.NotifyKinds (none at all is a
// choice too: the target then hears only tests). A kind that is not one
// is refused, changing nothing.
func (k *Notices) SetTargetKinds(ctx context.Context, u *hub.User, id string, kinds []string) (*hub.NotifyTarget, error) {
	kinds, err := checkKinds(kinds)
	if err != nil {
		return nil, err
	}
	t, err := k.target(ctx, u, id)
	if err != nil {
		return nil, err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.SetNotifyTargetKinds(ctx, id, kinds) }); err != nil {
		return nil, hub.AsError(err)
	}
	t.Kinds = kinds
	return t, nil
}

// RemoveTarget deletes one of the person's devices or topics with the
// notifications it still had to send.
func (k *Notices) RemoveTarget(ctx context.Context, u *hub.User, id string) (*hub.NotifyTarget, error) {
	t, err := k.target(ctx, u, id)
	if err != nil {
		return nil, err
	}
	if err := k.store.Update(ctx, func(tx hub.Tx) error { return tx.DeleteNotifyTarget(ctx, id) }); err != nil {
		return nil, hub.AsError(err)
	}
	return t, nil
}

// Log is the person's delivery log, newest first.
func (k *Notices) Log(ctx context.Context, u *hub.User) ([]hub.NotifyAttempt, error) {
	l, err := k.store.NotifyAttempts(ctx, u.ID, LogSize)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return l, nil
}

// Settings are everything Settings shows of a person's notifications:
// their time zone, quiet hours, devices and topics with the kinds each is
// told of, the latest deliveries, and the key a browser subscribes with.
type Settings struct {
	TimeZone       string
	Prefs          hub.NotifyPrefs
	Targets        []*hub.NotifyTarget
	Log            []hub.NotifyAttempt
	VAPIDPublicKey string
}

// Settings are the person's notification Settings.
func (k *Notices) Settings(ctx context.Context, u *hub.User) (*Settings, error) {
	p, err := k.Prefs(ctx, u)
	if err != nil {
		return nil, err
	}
	ts, err := k.Targets(ctx, u)
	if err != nil {
		return nil, err
	}
	log, err := k.Log(ctx, u)
	if err != nil {
		return nil, err
	}
	key, err := k.VAPIDPublicKey(ctx)
	if err != nil {
		return nil, err
	}
	return &Settings{TimeZone: u.TimeZone, Prefs: p, Targets: ts, Log: log, VAPIDPublicKey: key}, nil
}

// SetSettings sets the person's time zone and quiet hours together, or
// neither when either is wrong. kinds, when not nil, are set on every one
// of their devices and topics (what a client that knows only one choice
// for the person means); nil leaves each target's kinds as they are.
func (k *Notices) SetSettings(ctx context.Context, u *hub.User, timeZone string, p hub.NotifyPrefs, kinds []string) (*Settings, error) {
	if _, err := hub.LoadLocation(strings.TrimSpace(timeZone)); err != nil {
		return nil, err
	}
	if err := checkQuiet(p); err != nil {
		return nil, err
	}
	if kinds != nil {
		var err error
		if kinds, err = checkKinds(kinds); err != nil {
			return nil, err
		}
		err = k.store.Update(ctx, func(tx hub.Tx) error {
			ts, err := tx.NotifyTargets(ctx, u.ID)
			for _, t := range ts {
				if err == nil {
					err = tx.SetNotifyTargetKinds(ctx, t.ID, kinds)
				}
			}
			return err
		})
		if err != nil {
			return nil, hub.AsError(err)
		}
	}
	if _, err := k.SetPrefs(ctx, u, p); err != nil {
		return nil, err
	}
	if err := k.SetTimeZone(ctx, u, timeZone); err != nil {
		return nil, err
	}
	return k.Settings(ctx, u)
}

// FormatQuiet writes minutes after midnight as HH:MM.
func FormatQuiet(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// ParseQuiet reads a time of day, HH:MM, as minutes after midnight.
func ParseQuiet(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, hub.Invalid("", "%q is not a time of day; give HH:MM, like 22:00", hub.Echo(s))
	}
	return t.Hour()*60 + t.Minute(), nil
}
