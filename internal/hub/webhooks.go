package hub

import (
	"context"
	"fmt"
	"time"
)

// Webhooks (§18): an owner gives an agent HTTPS endpoints, called when an
// event arrives for it while none of its sessions waits — the push MCP
// lacks. A call names the event but carries none of its words; the agent
// fetches them with its own token. Calls go through a durable outbox,
// written in the event's own transaction (update), so a restart or a
// failover loses none; they are signed per Standard Webhooks, retried with
// backoff for a day with the same webhook-id (at least once), rate-limited
// per endpoint, and sent only to public addresses unless the admin lets a
// host through. The hub keeps the records and queues the calls with the
// events that make them (queue.go); internal/webhook manages the endpoints
// and makes the calls.

// Webhook is an HTTPS endpoint of an agent (§18).
type Webhook struct {
	ID          string // wh_…
	AgentID     string
	AgentHandle string // filled by reads
	URL         string
	CreatedAt   time.Time
	// DisabledAt is when its calls had failed for webhook.Retry.For and it
	// was switched off (zero: enabled), and DisabledReason why.
	DisabledAt     time.Time
	DisabledReason string
	Pending        int // calls still to make, filled by reads
}

// Enabled reports whether the endpoint is called.
func (w *Webhook) Enabled() bool { return w.DisabledAt.IsZero() }

// WebhookCall is a call in the outbox: one event told to one endpoint.
type WebhookCall struct {
	ID        string // whc_…: the webhook-id, the same on every retry
	WebhookID string
	EventID   int64
	Type      string // the event's type
	Payload   []byte // the JSON body, WebhookPayload
	CreatedAt time.Time
	DueAt     time.Time // when it may be sent next
	Attempts  int       // how many failed
	// Filled by ClaimWebhookCalls: where it goes, the secret it is
	// signed with, and whose it is.
	URL, Secret                   string
	AgentID, AgentHandle, OwnerID string
}

// WebhookAttempt is one line of an endpoint's delivery log.
type WebhookAttempt struct {
	ID        string // wha_…
	WebhookID string
	CallID    string // the webhook-id sent
	Type      string // the event's type
	At        time.Time
	Status    int    // the answer's HTTP status; 0 when none came
	Error     string // why none came; "" when one did
	Duration  time.Duration
}

// OK reports whether the attempt delivered its call: a 2xx answer.
func (a WebhookAttempt) OK() bool { return a.Error == "" && a.Status >= 200 && a.Status < 300 }

// Problem says what went wrong with an attempt: its error, or the status
// it was answered with ("" for one that delivered).
func (a WebhookAttempt) Problem() string {
	switch {
	case a.OK():
		return ""
	case a.Error != "":
		return a.Error
	}
	return fmt.Sprintf("it was answered %d", a.Status)
}

// The outbox's view of a call (outbox.Row): its endpoint is its target.
func (c *WebhookCall) Target() string    { return c.WebhookID }
func (c *WebhookCall) Queued() time.Time { return c.CreatedAt }
func (c *WebhookCall) Failed() int       { return c.Attempts }

// WebhookPayload is the JSON body of a call, in Standard Webhooks' shape:
// the event's type, when it happened, and what names it — never its words.
type WebhookPayload struct {
	Type      string      `json:"type"`
	Timestamp string      `json:"timestamp"`
	Data      WebhookData `json:"data"`
}

// WebhookData names the event a call tells of.
type WebhookData struct {
	Agent          string `json:"agent"` // the agent's handle
	ConversationID string `json:"conversation_id,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	// Cursor is the agent's cursor just before the event:
	// wait_for_messages from it hands over this event first, with its
	// message, and then everything after it.
	Cursor string `json:"cursor"`
}

// WebhookReads are the queries of webhooks (Reader embeds them).
type WebhookReads interface {
	// Webhooks lists the agent's webhook endpoints, oldest first, each
	// with its agent's handle and its calls still to make (§18).
	Webhooks(ctx context.Context, agentID string) ([]*Webhook, error)
	// WebhookAgents lists the agents with at least one enabled endpoint.
	WebhookAgents(ctx context.Context) ([]string, error)
	Webhook(ctx context.Context, id string) (*Webhook, error)
	// WebhookAttempts lists an endpoint's latest attempts, newest first,
	// at most limit.
	WebhookAttempts(ctx context.Context, webhookID string, limit int) ([]WebhookAttempt, error)
	// DueWebhooks lists the enabled endpoints with calls due at now, the
	// one whose call has waited longest first.
	DueWebhooks(ctx context.Context, now time.Time) ([]string, error)
}

// WebhookWrites are the writes of webhooks (Tx embeds them).
type WebhookWrites interface {
	// InsertWebhook stores an endpoint with the secret it signs with.
	InsertWebhook(ctx context.Context, w *Webhook, secret string) error
	// DeleteWebhook deletes an endpoint with its calls and its log.
	DeleteWebhook(ctx context.Context, id string) error
	// SetWebhookDisabled disables an endpoint (at not zero), saying why,
	// and drops its calls; at zero enables it again.
	SetWebhookDisabled(ctx context.Context, id string, at time.Time, reason string) error
	// InsertWebhookCalls adds calls to the outbox.
	InsertWebhookCalls(ctx context.Context, calls []*WebhookCall) error
	// ClaimWebhookCalls takes up to limit calls of an enabled endpoint
	// that are due at now (oldest due first), in the order they were made,
	// with the endpoint's URL and secret and its agent, and makes them due
	// at until instead: no one else sends them meanwhile, and a call whose
	// sender stopped is due again then. Rows another transaction holds are
	// skipped, so two replicas never claim the same call.
	ClaimWebhookCalls(ctx context.Context, webhookID string, now, until time.Time, limit int) ([]*WebhookCall, error)
	// DeleteWebhookCall deletes a delivered call.
	DeleteWebhookCall(ctx context.Context, id string) error
	// RescheduleWebhookCall stores a call's attempts and when it is due.
	RescheduleWebhookCall(ctx context.Context, c *WebhookCall) error
	// InsertWebhookAttempt logs an attempt, keeping only the endpoint's
	// latest keep.
	InsertWebhookAttempt(ctx context.Context, a *WebhookAttempt, keep int) error
}
