package hub

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Owner notifications (§19): a person chooses where they are told of what
// waits for them away from the dashboard — a browser's Web Push
// subscription or an ntfy topic — which kinds of thing tell them on each,
// and a daily window of quiet hours, read in their own time zone. Notifications
// carry a summary and a link, never a body. What a notification says
// and when it is due are decided here, in the transaction that stores the
// events (queueNotifications, queue.go); managing devices, topics and
// preferences, the VAPID key pair and sending are internal/push's
// (push.Notices).

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

// DefaultNotifyKinds is what a new device or topic hears of until its
// person chooses: every kind but every message.
var DefaultNotifyKinds = slices.DeleteFunc(slices.Clone(NotifyKinds), func(k string) bool { return k == NotifyMessage })

// urgentKinds wait for a decision: ntfy publishes them at high priority,
// and quiet hours let them through when the person asks.
var urgentKinds = []string{NotifyQuestion, NotifyPermission}

// Urgent reports whether a kind of notification waits for a decision.
func Urgent(kind string) bool { return slices.Contains(urgentKinds, kind) }

// NotifyTarget is a place a person is told (§19).
type NotifyTarget struct {
	ID     string // nt_…
	UserID string
	Kind   string // TargetWebPush or TargetNtfy
	URL    string // the push service's endpoint, or the ntfy topic URL
	// P256dh and Auth are a push subscription's keys (base64url).
	P256dh, Auth string
	// Token is an ntfy topic's access token ("" for none).
	Token string
	Label string // the browser's user agent, or what the person named it
	// Kinds are the kinds that notify on this target, in NotifyKinds'
	// order: each device and topic is told of what its person chose for it.
	Kinds     []string
	CreatedAt time.Time
}

// Wants reports whether a kind notifies on the target.
func (t *NotifyTarget) Wants(kind string) bool { return slices.Contains(t.Kinds, kind) }

// NotifyPrefs are when a person is not told (§19), whichever the target;
// what tells them is each target's (NotifyTarget.Kinds).
type NotifyPrefs struct {
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
	// SetNotifyTargetKinds sets the kinds that notify on a target.
	SetNotifyTargetKinds(ctx context.Context, id string, kinds []string) error
	// InitMeta sets a meta key that has no value yet and leaves one that
	// has alone: of writers racing, the first wins (the VAPID key pair,
	// which every replica must send with the same).
	InitMeta(ctx context.Context, key, value string) error
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

// Notification is one notification in the outbox: one item told to one
// target.
type Notification struct {
	ID        string // ntf_…: the same on every retry
	TargetID  string
	UserID    string
	Kind      string // one of NotifyKinds, NotifyDigest or NotifyTest
	Item      string // what it is about: one notification per item and target
	Payload   NotifyPayload
	CreatedAt time.Time
	DueAt     time.Time
	Attempts  int
	To        *NotifyTarget // filled by ClaimNotifications
}

// NotifyPayload is what a notification says: never a body.
type NotifyPayload struct {
	Title          string   `json:"title"`
	Summary        string   `json:"summary,omitempty"`
	Agent          string   `json:"agent,omitempty"`
	ConversationID string   `json:"conversation_id,omitempty"`
	Path           string   `json:"path"` // the dashboard page, from its root
	Urgent         bool     `json:"urgent,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	Action         string   `json:"action,omitempty"` // the decision button's label; it opens Path
}

// The kinds of notification no person chooses: a digest of what came in
// past NotifyDigestAfter a minute, and a test the person asked for.
const (
	NotifyDigest = "digest"
	NotifyTest   = "test"
)

// The queueing's numbers (§19).
const (
	NotifyDigestAfter = 10  // notifications a minute to one person before the rest become one digest
	notifySummary     = 200 // code points of a summary
)

// NotifyAttempt is one line of a person's delivery log.
type NotifyAttempt struct {
	ID             string // ntl_…
	UserID         string
	TargetID       string
	NotificationID string
	Kind           string
	At             time.Time
	Status         int
	Error          string
}

// OK reports whether the attempt got its notification through.
func (a NotifyAttempt) OK() bool { return a.Error == "" && a.Status >= 200 && a.Status < 300 }

// eventStrings reads the string fields of an event's data, decoding it
// only when first asked: most events a send makes notify nobody.
func eventStrings(e *Event) func(key string) string {
	var data map[string]any
	decoded := false
	return func(key string) string {
		if !decoded {
			decoded = true
			if len(e.Data) > 0 {
				_ = json.Unmarshal(e.Data, &data)
			}
		}
		s, _ := data[key].(string)
		return s
	}
}

// notifyKind is the kind of notification an event to a person is, and the
// item it is about ("" when it notifies no one).
func notifyKind(e *Event, str func(key string) string) (kind, item string) {
	switch e.Type {
	case EventQuestionAsked:
		return NotifyQuestion, str("question_id")
	case EventMessagePending:
		return NotifyHeld, e.MessageID
	case EventGrantRequest:
		return NotifyGrant, str("request_id")
	case EventInboundAsk:
		return NotifyInbound, str("ask_id")
	case EventContactRequest:
		return NotifyContact, str("request_id")
	case EventProjectRequest:
		return NotifyProject, str("request_id")
	case EventPermissionRequest:
		return NotifyPermission, str("permission_id")
	case EventBrakeTripped:
		return NotifyBrake, "brake:" + e.ConversationID + ":" + str("agent") + ":" + str("brake")
	case EventConversationPaused:
		return NotifyPaused, "paused:" + e.ConversationID + ":" + FormatTime(e.CreatedAt)
	case EventMessageNew:
		if e.Message != nil && e.Message.SenderID != e.RecipientID {
			return NotifyMessage, e.MessageID
		}
	}
	return "", ""
}

// notifyPayload is what a notification of kind says.
func notifyPayload(kind string, e *Event, str func(key string) string) NotifyPayload {
	p := NotifyPayload{Agent: str("agent"), ConversationID: e.ConversationID, Urgent: Urgent(kind), Path: "/approvals"}
	conv := "/conversations/" + url.PathEscape(e.ConversationID)
	who := p.Agent
	if who == "" {
		who = "An agent"
	}
	switch kind {
	case NotifyQuestion:
		p.Title, p.Summary, p.Tags, p.Action = who+" asks you", str("question"), []string{"question"}, "Answer"
	case NotifyHeld:
		p.Title, p.Tags = "A message waits for your review", []string{"hourglass"}
	case NotifyGrant:
		p.Title, p.Summary, p.Tags = who+" asks for a grant", "to reach "+str("contact"), []string{"key"}
	case NotifyInbound:
		p.Title, p.Tags = who+" asks to reach your agent", []string{"wave"}
	case NotifyContact:
		p.Title, p.Tags, p.Path = "@"+str("from")+" asks to be your contact", []string{"handshake"}, "/approvals"
	case NotifyProject:
		p.Title, p.Summary, p.Tags = who+" asks about a project", str("name"), []string{"clipboard"}
	case NotifyPermission:
		p.Title, p.Summary, p.Tags, p.Action = who+" asks to use "+str("tool_name"), str("description"), []string{"lock"}, "Decide"
	case NotifyBrake:
		p.Title, p.Summary, p.Tags, p.Path = "A brake stopped "+who, str("reason"), []string{"octagonal_sign"}, conv
	case NotifyPaused:
		p.Title, p.Tags, p.Path = "A conversation was paused", []string{"pause_button"}, conv
	case NotifyMessage:
		p.Title, p.Path = "A message for you", conv
		if e.Message != nil {
			p.Summary = e.Message.Summary
		}
	}
	if e.MessageID != "" && kind == NotifyHeld && e.ConversationID != "" {
		p.Path = conv
	}
	p.Summary = Preview(cleanText(p.Summary), notifySummary)
	return p
}

// The outbox's view of a notification (outbox.Row): its target is its own.
func (n *Notification) Target() string    { return n.TargetID }
func (n *Notification) Queued() time.Time { return n.CreatedAt }
func (n *Notification) Failed() int       { return n.Attempts }
