package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// The notification outbox (§19): notifications queued with the events that
// cause them, one per item and target (nothing told twice), held past the
// person's quiet hours, folded into one digest past NotifyDigestAfter a
// minute, and sent by an outbox dispatcher (internal/outbox) with each
// target its own, so that a slow or dead one delays no other.

// Notification is one notification in the outbox: one item told to one
// target.
type Notification struct {
	ID        string // ntf_…: the same on every retry
	TargetID  string
	UserID    string
	Kind      string // one of NotifyKinds, or "digest"
	Item      string // what it is about: one notification per item and target
	Payload   NotifyPayload
	CreatedAt time.Time
	DueAt     time.Time
	Attempts  int
	To        *NotifyTarget // filled by ClaimNotifications
	// Filled by the hub before sending: the server's VAPID keys and
	// subject, and the dashboard's URL the payload's links are under.
	VAPIDPublic, VAPIDPrivate, VAPIDSubject, BaseURL string
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

// NotifyDigest is the kind of a digest's notification.
const NotifyDigest = "digest"

// The outbox's numbers (§19).
const (
	NotifyDigestAfter = 10               // notifications a minute to one person before the rest become one digest
	NotifyLogSize     = 50               // lines kept in each person's delivery log
	NotifyTimeout     = 10 * time.Second // one send
	notifyLease       = 2 * time.Minute
	notifyBatch       = 100
	notifySummary     = 200 // code points of a summary
)

// NotifyRetry is how a failing notification is retried: a few seconds,
// then longer, for six hours, after which it is dropped.
var NotifyRetry = outbox.Backoff{First: 5 * time.Second, Max: 30 * time.Minute, Jitter: 0.2, For: 6 * time.Hour}

// What became of a notification's attempt: the values of
// palaver_notifications_total{outcome}.
const (
	NotifySent    = outbox.Delivered
	NotifyFailed  = outbox.Failed
	NotifyDropped = outbox.GaveUp // given up, or its subscription is gone
)

// NotifyOutcomes lists every outcome.
var NotifyOutcomes = []string{NotifySent, NotifyFailed, NotifyDropped}

// Notifier delivers one notification to its target (internal/push): Web
// Push with the notification's VAPID keys, or an ntfy publish, connecting
// to no address allow refuses. It never retries: the hub does.
type Notifier interface {
	Notify(ctx context.Context, n *Notification, allow func(netip.Addr) bool) NotifyResult
}

// NotifyResult is how a send went.
type NotifyResult struct {
	Status int   // the answer's HTTP status; 0 when none came
	Gone   bool  // the push service says the subscription is no more (404, 410)
	Err    error // why no answer came
}

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

// queueNotifications puts into the outbox, in the transaction that stores
// the events, a notification to each target of every person an event tells
// of something they chose to hear of: due when their quiet hours end, at
// most one per item and target, and — past NotifyDigestAfter in the last
// minute — one digest for the rest of that minute. It reports whether it
// queued any.
func (h *Hub) queueNotifications(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var out []*Notification
	now := h.now()
	type person struct {
		prefs   NotifyPrefs
		loc     *time.Location
		targets []*NotifyTarget
		recent  int
	}
	people := map[string]*person{}
	for _, e := range events {
		if idKind(e.RecipientID) != IDUser {
			continue
		}
		str := eventStrings(e)
		kind, item := notifyKind(e, str)
		if kind == "" || item == "" {
			continue
		}
		p := people[e.RecipientID]
		if p == nil {
			p = &person{}
			people[e.RecipientID] = p
			ts, err := tx.NotifyTargets(ctx, e.RecipientID)
			if err != nil {
				return false, err
			}
			p.targets = ts
			if len(ts) > 0 {
				if p.prefs, err = tx.NotifyPrefs(ctx, e.RecipientID); errors.Is(err, ErrNoRows) {
					p.prefs = NotifyPrefs{Kinds: DefaultNotifyKinds}
				} else if err != nil {
					return false, err
				}
				u, err := tx.UserByID(ctx, e.RecipientID)
				if err != nil {
					return false, err
				}
				p.loc = u.Location()
				if p.recent, err = tx.RecentNotifications(ctx, e.RecipientID, now.Add(-time.Minute)); err != nil {
					return false, err
				}
			}
		}
		if len(p.targets) == 0 || !p.prefs.Wants(kind) {
			continue
		}
		payload := notifyPayload(kind, e, str)
		item = kind + ":" + item
		if p.recent >= NotifyDigestAfter {
			kind, item = NotifyDigest, NotifyDigest+":"+now.Truncate(time.Minute).Format("2006-01-02T15:04")
			payload = NotifyPayload{Title: "More waits for you", Summary: "Several things came in within a minute; see them on the dashboard.", Path: "/approvals", Tags: []string{"bell"}}
		}
		p.recent++
		due := now
		if p.prefs.Quiet(now, p.loc, kind) {
			due = p.prefs.QuietEnd(now, p.loc)
		}
		for _, t := range p.targets {
			out = append(out, &Notification{ID: NewID(IDNotification, now), TargetID: t.ID, UserID: e.RecipientID, Kind: kind, Item: item,
				Payload: payload, CreatedAt: now, DueAt: due})
		}
	}
	if len(out) == 0 {
		return false, nil
	}
	return true, tx.InsertNotifications(ctx, out)
}

// The outbox's view of a notification (outbox.Row): its target is its own.
func (n *Notification) Target() string    { return n.TargetID }
func (n *Notification) Queued() time.Time { return n.CreatedAt }
func (n *Notification) Failed() int       { return n.Attempts }

// Link is the absolute URL of the page a notification opens.
func (n *Notification) Link() string {
	return strings.TrimRight(n.BaseURL, "/") + n.Payload.Path
}

// notifyLimits are what each target is given.
var notifyLimits = outbox.Limits{Concurrency: 4, Rate: 5, Burst: 10, Lease: notifyLease, Batch: notifyBatch, Retry: NotifyRetry}
