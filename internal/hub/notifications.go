package hub

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Owner notifications (§19): a person chooses where they are told of what
// waits for them away from the dashboard — a browser's Web Push
// subscription or an ntfy topic — which kinds of thing tell them, and a
// daily window of quiet hours, read in their own time zone. Notifications
// carry a summary and a link, never a body.

// Where a notification goes: the kinds of NotifyTarget.
const (
	TargetWebPush = "webpush" // a browser's push subscription (RFC 8030)
	TargetNtfy    = "ntfy"    // an ntfy topic URL
)

// The kinds of notification a person may choose (§19).
const (
	NotifyQuestion   = "question"   // an agent asks its owner (ask_owner)
	NotifyHeld       = "held"       // a message held for the owner's review
	NotifyGrant      = "grant"      // an agent asks for a grant
	NotifyInbound    = "inbound"    // someone else's agent asks to reach one
	NotifyContact    = "contact"    // a contact request
	NotifyProject    = "project"    // a project proposal or access request
	NotifyPermission = "permission" // Claude Code asks to use a tool
	NotifyBrake      = "brake"      // a brake refused an agent's send
	NotifyPaused     = "paused"     // a conversation was paused
	NotifyMessage    = "message"    // every message to the person
)

// NotifyKinds lists every kind, in the order Settings shows them.
var NotifyKinds = []string{NotifyQuestion, NotifyHeld, NotifyGrant, NotifyInbound, NotifyContact, NotifyProject,
	NotifyPermission, NotifyBrake, NotifyPaused, NotifyMessage}

// DefaultNotifyKinds is what a person who chose nothing hears of: every
// kind but every message.
var DefaultNotifyKinds = slices.DeleteFunc(slices.Clone(NotifyKinds), func(k string) bool { return k == NotifyMessage })

// urgentKinds wait for a decision: ntfy publishes them at high priority,
// and quiet hours let them through when the person asks.
var urgentKinds = []string{NotifyQuestion, NotifyPermission}

// Urgent reports whether a kind of notification waits for a decision.
func Urgent(kind string) bool { return slices.Contains(urgentKinds, kind) }

// The notifications' numbers (§19).
const (
	MaxNotifyTargets = 10  // devices and topics per person
	maxPushKey       = 200 // characters of a subscription's keys
	maxNotifyLabel   = 100 // characters of a target's label
	maxNtfyToken     = 200 // characters of an ntfy access token
)

// NotifyTarget is a place a person is told (§19).
type NotifyTarget struct {
	ID     string // nt_…
	UserID string
	Kind   string // TargetWebPush or TargetNtfy
	URL    string // the push service's endpoint, or the ntfy topic URL
	// P256dh and Auth are a push subscription's keys (base64url).
	P256dh, Auth string
	// Token is an ntfy topic's access token ("" for none).
	Token     string
	Label     string // the browser's user agent, or what the person named it
	CreatedAt time.Time
}

// NotifyPrefs are what tells a person and when not (§19).
type NotifyPrefs struct {
	Kinds []string // the kinds that notify, in NotifyKinds' order
	// QuietFrom and QuietTo are the daily quiet hours, in minutes after
	// midnight in the person's time zone; equal, there are none. A window
	// may wrap past midnight (22:00–07:00).
	QuietFrom, QuietTo int
	// QuietUrgent lets urgent kinds through quiet hours.
	QuietUrgent bool
}

// Quiet reports whether at, read in loc, falls in the quiet hours, and so
// whether a notification of kind waits for them to end.
func (p NotifyPrefs) Quiet(at time.Time, loc *time.Location, kind string) bool {
	if p.QuietFrom == p.QuietTo || (p.QuietUrgent && Urgent(kind)) {
		return false
	}
	t := at.In(loc)
	m := t.Hour()*60 + t.Minute()
	if p.QuietFrom < p.QuietTo {
		return m >= p.QuietFrom && m < p.QuietTo
	}
	return m >= p.QuietFrom || m < p.QuietTo
}

// QuietEnd is when the quiet hours that at falls in end: the first moment
// a notification held by them is sent.
func (p NotifyPrefs) QuietEnd(at time.Time, loc *time.Location) time.Time {
	t := at.In(loc)
	end := time.Date(t.Year(), t.Month(), t.Day(), p.QuietTo/60, p.QuietTo%60, 0, 0, loc)
	if !end.After(t) {
		end = time.Date(t.Year(), t.Month(), t.Day()+1, p.QuietTo/60, p.QuietTo%60, 0, 0, loc)
	}
	return end.UTC()
}

// Wants reports whether a kind notifies the person.
func (p NotifyPrefs) Wants(kind string) bool { return slices.Contains(p.Kinds, kind) }

// location is the time zone named ("" is UTC), or says how to name one.
func location(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || strings.HasPrefix(name, "/") || name == "Local" {
		return nil, invalid("", "%q is not a time zone; give an IANA name like Europe/Berlin or America/New_York, or leave it empty for UTC", echo(name))
	}
	return loc, nil
}

// Location is the person's time zone (UTC when theirs no longer loads).
func (u *User) Location() *time.Location {
	loc, err := location(u.TimeZone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// SetTimeZone sets the time zone the person's quiet hours are read in: an
// IANA name, or "" for UTC.
func (h *Hub) SetTimeZone(ctx context.Context, u *User, name string) error {
	name = strings.TrimSpace(name)
	if _, err := location(name); err != nil {
		return err
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetUserTimeZone(ctx, u.ID, name) }); err != nil {
		return AsError(err)
	}
	u.TimeZone = name
	return nil
}

// NotifyPrefs are the person's notification preferences (DefaultNotifyKinds
// and no quiet hours until they choose).
func (h *Hub) NotifyPrefs(ctx context.Context, u *User) (NotifyPrefs, error) {
	p, err := h.store.NotifyPrefs(ctx, u.ID)
	if errors.Is(err, ErrNoRows) {
		return NotifyPrefs{Kinds: slices.Clone(DefaultNotifyKinds)}, nil
	}
	if err != nil {
		return NotifyPrefs{}, AsError(err)
	}
	return p, nil
}

// SetNotifyPrefs stores which kinds notify the person and their quiet
// hours. Every kind is one of NotifyKinds; the hours are minutes within a
// day.
func (h *Hub) SetNotifyPrefs(ctx context.Context, u *User, p NotifyPrefs) (NotifyPrefs, error) {
	kinds := []string{}
	for _, k := range NotifyKinds {
		if slices.Contains(p.Kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, k := range p.Kinds {
		if !slices.Contains(NotifyKinds, k) {
			return NotifyPrefs{}, invalid("", "%q is not a kind of notification; choose from %s", echo(k), strings.Join(NotifyKinds, ", "))
		}
	}
	for _, m := range []int{p.QuietFrom, p.QuietTo} {
		if m < 0 || m >= 24*60 {
			return NotifyPrefs{}, invalid("", "quiet hours are times of day from 00:00 to 23:59; %d minutes after midnight is not one", m)
		}
	}
	p.Kinds = kinds
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetNotifyPrefs(ctx, u.ID, p) }); err != nil {
		return NotifyPrefs{}, AsError(err)
	}
	return p, nil
}

// NotifyTargets lists the person's devices and topics, oldest first.
func (h *Hub) NotifyTargets(ctx context.Context, u *User) ([]*NotifyTarget, error) {
	ts, err := h.store.NotifyTargets(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	return ts, nil
}

// checkNotifyURL returns a push endpoint's or ntfy topic's URL as it is
// kept, or says what is wrong with it, as for webhooks (checkOutboundURL).
func (h *Hub) checkNotifyURL(ctx context.Context, what, raw string) (string, error) {
	return h.checkOutboundURL(ctx, raw, Outbound{What: what, Example: "https://ntfy.sh/my-topic", Sent: "notifications are sent",
		UserInfo: "give an access token on its own instead", Reach: "notifications go only to"})
}

// checkPushKey checks one of a subscription's keys: base64url of n bytes.
func checkPushKey(name, s string, n int) (string, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(s) > maxPushKey || len(b) != n {
		return "", invalid("", "the subscription's %s key is not %d bytes in base64url; give the key the browser's PushSubscription has", name, n)
	}
	return s, nil
}

// addNotifyTarget stores a target, within the person's MaxNotifyTargets;
// a browser subscribing again with the same endpoint replaces its keys.
func (h *Hub) addNotifyTarget(ctx context.Context, u *User, t *NotifyTarget) (*NotifyTarget, error) {
	label, err := checkText("label", cleanText(t.Label), 0, 1<<20)
	if err != nil {
		return nil, err
	}
	t.Label = Preview(label, maxNotifyLabel)
	now := h.now()
	t.ID, t.UserID, t.CreatedAt = NewID(IDNotifyTarget, now), u.ID, now
	err = h.store.Update(ctx, func(tx Tx) error {
		ts, err := tx.NotifyTargets(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, o := range ts {
			if o.URL == t.URL {
				if err := tx.DeleteNotifyTarget(ctx, o.ID); err != nil {
					return err
				}
				ts = slices.DeleteFunc(ts, func(x *NotifyTarget) bool { return x.ID == o.ID })
			}
		}
		if len(ts) >= MaxNotifyTargets {
			return invalid("", "you have %d devices and topics already, the most a person may have; remove one first", MaxNotifyTargets)
		}
		return tx.InsertNotifyTarget(ctx, t)
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return t, nil
}

// AddPushSubscription keeps a browser's Web Push subscription (§19): its
// endpoint at the push service, its p256dh (a P-256 public key, 65 bytes)
// and auth (16 bytes) keys, and a label (its user agent).
func (h *Hub) AddPushSubscription(ctx context.Context, u *User, endpoint, p256dh, auth, label string) (*NotifyTarget, error) {
	ep, err := h.checkNotifyURL(ctx, "push endpoint", endpoint)
	if err != nil {
		return nil, err
	}
	if p256dh, err = checkPushKey("p256dh", p256dh, 65); err != nil {
		return nil, err
	}
	if auth, err = checkPushKey("auth", auth, 16); err != nil {
		return nil, err
	}
	return h.addNotifyTarget(ctx, u, &NotifyTarget{Kind: TargetWebPush, URL: ep, P256dh: p256dh, Auth: auth, Label: label})
}

// AddNtfyTopic keeps an ntfy topic the person is told on (§19): its https
// URL on any ntfy server and an optional access token.
func (h *Hub) AddNtfyTopic(ctx context.Context, u *User, topicURL, token, label string) (*NotifyTarget, error) {
	tu, err := h.checkNotifyURL(ctx, "ntfy topic", topicURL)
	if err != nil {
		return nil, err
	}
	if p := strings.Trim(mustPath(tu), "/"); p == "" || strings.Contains(p, "/") {
		return nil, invalid("", "the ntfy topic URL %q names no topic; give the server and the topic, like https://ntfy.sh/my-topic", echo(tu))
	}
	token = strings.TrimSpace(token)
	if len(token) > maxNtfyToken || strings.ContainsAny(token, " \t\r\n") {
		return nil, invalid("", "the access token is not one ntfy makes (tk_… or a password, at most %d characters, no spaces)", maxNtfyToken)
	}
	if label == "" {
		label = tu
	}
	return h.addNotifyTarget(ctx, u, &NotifyTarget{Kind: TargetNtfy, URL: tu, Token: token, Label: label})
}

func mustPath(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Path
}

// RemoveNotifyTarget deletes one of the person's devices or topics with
// the notifications it still had to send.
func (h *Hub) RemoveNotifyTarget(ctx context.Context, u *User, id string) (*NotifyTarget, error) {
	t, err := h.store.NotifyTarget(ctx, id)
	if err == nil && t.UserID != u.ID {
		err = ErrNoRows
	}
	if err != nil {
		return nil, lookupErr(err, "you have no device or topic %q", echo(id))
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.DeleteNotifyTarget(ctx, id) }); err != nil {
		return nil, AsError(err)
	}
	return t, nil
}

// FormatQuiet writes minutes after midnight as HH:MM.
func FormatQuiet(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// NotifyReads are the queries of notifications (Reader embeds them).
type NotifyReads interface {
	// NotifyTargets lists a person's targets, oldest first.
	NotifyTargets(ctx context.Context, userID string) ([]*NotifyTarget, error)
	NotifyTarget(ctx context.Context, id string) (*NotifyTarget, error)
	// NotifyPrefs are a person's preferences; ErrNoRows when they chose
	// none.
	NotifyPrefs(ctx context.Context, userID string) (NotifyPrefs, error)
	// RecentNotifications counts the notifications made for a person
	// since, over all their targets, each item once.
	RecentNotifications(ctx context.Context, userID string, since time.Time) (int, error)
	// DueNotifyTargets lists the targets with unsent notifications due at
	// now, the longest waiting first.
	DueNotifyTargets(ctx context.Context, now time.Time) ([]string, error)
	// NotifyAttempts is a person's delivery log, newest first, at most limit.
	NotifyAttempts(ctx context.Context, userID string, limit int) ([]NotifyAttempt, error)
}

// NotifyWrites are the writes of notifications (Tx embeds them).
type NotifyWrites interface {
	SetUserTimeZone(ctx context.Context, userID, name string) error
	SetNotifyPrefs(ctx context.Context, userID string, p NotifyPrefs) error
	InsertNotifyTarget(ctx context.Context, t *NotifyTarget) error
	// DeleteNotifyTarget deletes a target with its notifications.
	DeleteNotifyTarget(ctx context.Context, id string) error
	// InsertNotifications adds notifications to the outbox, skipping any
	// whose target was told of its item already.
	InsertNotifications(ctx context.Context, ns []*Notification) error
	// ClaimNotifications takes up to limit unsent notifications of a
	// target due at now, oldest first, with the target, and makes them due
	// at until instead (rows another transaction holds are skipped).
	ClaimNotifications(ctx context.Context, targetID string, now, until time.Time, limit int) ([]*Notification, error)
	// MarkNotificationSent marks a notification done with at at.
	MarkNotificationSent(ctx context.Context, id string, at time.Time) error
	// RescheduleNotification stores its attempts and when it is due.
	RescheduleNotification(ctx context.Context, n *Notification) error
	// InsertNotifyAttempt logs an attempt, keeping the person's latest keep.
	InsertNotifyAttempt(ctx context.Context, a *NotifyAttempt, keep int) error
	// PruneNotifications deletes the notifications queued before t that
	// are done with (sent or dropped); every one still to send stays.
	PruneNotifications(ctx context.Context, before time.Time) error
}

// NotifySettings are everything Settings shows of a person's
// notifications: their time zone, preferences, devices and topics, the
// latest deliveries, and the key a browser subscribes with.
type NotifySettings struct {
	TimeZone       string
	Prefs          NotifyPrefs
	Targets        []*NotifyTarget
	Log            []NotifyAttempt
	VAPIDPublicKey string
}

// Notifications are the person's NotifySettings.
func (h *Hub) Notifications(ctx context.Context, u *User) (*NotifySettings, error) {
	p, err := h.NotifyPrefs(ctx, u)
	if err != nil {
		return nil, err
	}
	ts, err := h.NotifyTargets(ctx, u)
	if err != nil {
		return nil, err
	}
	log, err := h.NotifyLog(ctx, u)
	if err != nil {
		return nil, err
	}
	key, err := h.VAPIDPublicKey(ctx)
	if err != nil {
		return nil, err
	}
	return &NotifySettings{TimeZone: u.TimeZone, Prefs: p, Targets: ts, Log: log, VAPIDPublicKey: key}, nil
}

// SetNotifications sets the person's time zone and preferences together,
// or neither when either is wrong.
func (h *Hub) SetNotifications(ctx context.Context, u *User, timeZone string, p NotifyPrefs) (*NotifySettings, error) {
	if _, err := location(strings.TrimSpace(timeZone)); err != nil {
		return nil, err
	}
	if _, err := h.SetNotifyPrefs(ctx, u, p); err != nil {
		return nil, err
	}
	if err := h.SetTimeZone(ctx, u, timeZone); err != nil {
		return nil, err
	}
	return h.Notifications(ctx, u)
}

// ParseQuiet reads a time of day, HH:MM, as minutes after midnight.
func ParseQuiet(s string) (int, error) {
	t, err := time.Parse("15:04", strings.TrimSpace(s))
	if err != nil {
		return 0, invalid("", "%q is not a time of day; give HH:MM, like 22:00", echo(s))
	}
	return t.Hour()*60 + t.Minute(), nil
}

// NotifyTest is the kind of a test notification, one the person asked for.
const NotifyTest = "test"

// TestNotification queues one notification of kind test to each of the
// person's devices and topics, through the outbox as any other: it is due
// at once, whatever kinds they chose and in their quiet hours too, since
// they asked for it. It returns how many it queued; with no device or
// topic it is refused.
func (h *Hub) TestNotification(ctx context.Context, u *User) (int, error) {
	now := h.now()
	item := NotifyTest + ":" + NewID(IDNotification, now) // every test is an item of its own
	payload := NotifyPayload{Title: "A test from Palaver", Summary: "Notifications reach you here.", Path: "/settings#notify", Tags: []string{"white_check_mark"}}
	var n int
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		ts, err := tx.NotifyTargets(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		if len(ts) == 0 {
			return nil, invalid("no_targets", "there is nowhere to send a test: add a device or an ntfy topic first, then send one")
		}
		var out []*Notification
		for _, t := range ts {
			out = append(out, &Notification{ID: NewID(IDNotification, now), TargetID: t.ID, UserID: u.ID, Kind: NotifyTest, Item: item,
				Payload: payload, CreatedAt: now, DueAt: now})
		}
		n = len(out)
		return nil, tx.InsertNotifications(ctx, out)
	})
	if err != nil {
		return 0, err
	}
	h.kickNotifications()
	return n, nil
}
