package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// Webhooks (§18): an owner gives an agent HTTPS endpoints, called when an
// event arrives for it while none of its sessions waits — the push MCP
// lacks. A call names the event but carries none of its words; the agent
// fetches them with its own token. Calls go through a durable outbox,
// written in the event's own transaction (update), so a restart or a
// failover loses none; they are signed per Standard Webhooks, retried with
// backoff for a day with the same webhook-id (at least once), rate-limited
// per endpoint, and sent only to public addresses unless the admin lets a
// host through. The hub decides what is sent when; a WebhookSender
// (internal/webhook) only delivers.

// Webhook is an HTTPS endpoint of an agent (§18).
type Webhook struct {
	ID          string // wh_…
	AgentID     string
	AgentHandle string // filled by reads
	URL         string
	CreatedAt   time.Time
	// DisabledAt is when its calls had failed for WebhookRetry.For and it
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

// The webhooks' numbers (§18), declared once: the faces and docs read them.
const (
	MaxWebhooks        = 5                // endpoints per agent
	WebhookRate        = 5                // calls started a second to one endpoint, by each server process
	WebhookBurst       = 10               // calls started at once to an endpoint that was quiet, within WebhookRate
	WebhookConcurrency = 10               // calls to one endpoint in flight at once, in each server process
	WebhookLog         = 20               // attempts kept in each endpoint's delivery log
	WebhookTimeout     = 10 * time.Second // one call, from connecting to the answer's last byte

	webhookLease = 2 * time.Minute // a claim: well over WebhookTimeout
	webhookBatch = 100             // calls claimed in one step, across endpoints
	webhookError = 300             // code points of an attempt's error kept in the log
)

// WebhookSecretPrefix starts every endpoint's signing secret.
const WebhookSecretPrefix = "whsec_"

// WebhookRetry is how a failing webhook call is retried (§18): after about
// 10 s, 20 s, 40 s … and then every 2 h, for 24 h; then its endpoint is
// disabled and the owner told.
var WebhookRetry = outbox.Backoff{First: 10 * time.Second, Max: 2 * time.Hour, Jitter: 0.2, For: 24 * time.Hour}

// What became of a call's attempt: the values of
// palaver_webhook_deliveries_total{outcome}.
const (
	WebhookDelivered = outbox.Delivered // a 2xx answer: the call leaves the outbox
	WebhookFailed    = outbox.Failed    // no 2xx answer: it is retried later
	WebhookGaveUp    = outbox.GaveUp    // failed for WebhookRetry.For: its endpoint is disabled
)

// WebhookOutcomes lists every outcome.
var WebhookOutcomes = []string{WebhookDelivered, WebhookFailed, WebhookGaveUp}

// WebhookSender makes webhook calls (§18): an https POST of the call's
// payload to its URL, signed per Standard Webhooks with its secret
// (webhook-id the call's id, webhook-timestamp at), connecting to no
// address allow refuses, following no redirect, and giving up when ctx
// ends. It never retries: the hub does.
type WebhookSender interface {
	Send(ctx context.Context, c *WebhookCall, at time.Time, allow func(netip.Addr) bool) WebhookResult
}

// WebhookResult is how a call went.
type WebhookResult struct {
	Status   int   // the answer's HTTP status; 0 when none came
	Err      error // why no answer came
	Duration time.Duration
}

// Resolver looks up the addresses of a name (*net.Resolver is one): an
// endpoint's host is checked when it is saved.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the look-up of an endpoint's host.
const resolveTimeout = 5 * time.Second

// checkWebhookURL returns an endpoint's URL as it is kept, or says what is
// wrong with it (checkOutboundURL).
func (h *Hub) checkWebhookURL(ctx context.Context, raw string) (string, error) {
	return h.checkOutboundURL(ctx, raw, outbound{what: "webhook", example: "https://example.com/palaver", sent: "webhooks are sent",
		userInfo: "put no credentials in it (calls are signed with the endpoint's secret)", reach: "webhooks call only"})
}

// outbound is how checkOutboundURL names one kind of URL the server calls
// out to: what it is, an example, how they are sent, what to do instead
// of user info, and who reaches only global addresses.
type outbound struct{ what, example, sent, userInfo, reach string }

// checkOutboundURL returns a URL the server will call out to (a webhook
// endpoint, a push service, an ntfy topic) as it is kept, or says what is
// wrong with it: absolute https, no user info or fragment, and a host
// whose every address the egress policy lets through. The sender checks
// each address again when it connects, as DNS changes.
func (h *Hub) checkOutboundURL(ctx context.Context, raw string, k outbound) (string, error) {
	s, err := checkText("url", strings.TrimSpace(raw), 1, MaxURL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	bad := func(format string, args ...any) error {
		return invalid("", "the %s URL %q "+format, append([]any{k.what, echo(s)}, args...)...)
	}
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", bad("is not an absolute URL; give one like %s", k.example)
	case u.Scheme != "https":
		return "", bad("is not https; %s over https only", k.sent)
	case u.User != nil:
		return "", bad("has user info; %s", k.userInfo)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", bad("has a fragment")
	}
	host := u.Hostname()
	addrs := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, ip)
	} else {
		lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err = h.resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return "", bad("has a host, %s, that could not be resolved; give a host name that resolves, or an address", echo(host))
		}
		for i, ip := range addrs {
			addrs[i] = ip.Unmap() // a resolver gives an IPv4 address as IPv4-mapped at times
		}
	}
	for _, ip := range addrs {
		if r := h.egressPolicy.Refuse(host, ip); r != nil {
			return "", bad("is at %s; %s globally reachable addresses unless the server's admin lets the host %s through (its allow-private-host setting)", r, k.reach, echo(host))
		}
	}
	return u.String(), nil
}

// newWebhookSecret is a fresh signing secret: whsec_ and 32 random bytes
// in base64, as Standard Webhooks' libraries take it.
func newWebhookSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// AddWebhook gives one of the person's agents an endpoint (§18) and
// returns it with its signing secret, which is shown this once. The URL is
// https and its host resolves only to public addresses (or is one the
// admin let through); an agent has at most MaxWebhooks. An archived agent
// gets none.
func (h *Hub) AddWebhook(ctx context.Context, u *User, slug, rawURL string) (*Webhook, string, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, "", err
	}
	if a.Archived() {
		return nil, "", invalid("", "%s is archived; bring it back before giving it a webhook", a.Handle())
	}
	endpoint, err := h.checkWebhookURL(ctx, rawURL)
	if err != nil {
		return nil, "", err
	}
	now := h.now()
	w := &Webhook{ID: NewID(IDWebhook, now), AgentID: a.ID, AgentHandle: a.Handle(), URL: endpoint, CreatedAt: now}
	secret := newWebhookSecret()
	err = h.store.Update(ctx, func(tx Tx) error {
		ws, err := tx.Webhooks(ctx, a.ID)
		if err != nil {
			return err
		}
		if len(ws) >= MaxWebhooks {
			return invalid("", "%s has %d webhooks already, the most an agent may have; remove one first", a.Handle(), MaxWebhooks)
		}
		return tx.InsertWebhook(ctx, w, secret)
	})
	h.hooked.forget()
	if err != nil {
		return nil, "", AsError(err)
	}
	return w, secret, nil
}

// WebhookView is an endpoint with its delivery log, newest first.
type WebhookView struct {
	*Webhook
	Attempts []WebhookAttempt
}

// Webhooks lists the person's agent's endpoints, oldest first, each with
// its latest WebhookLog attempts.
func (h *Hub) Webhooks(ctx context.Context, u *User, slug string) ([]WebhookView, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	return h.webhookViews(ctx, a)
}

func (h *Hub) webhookViews(ctx context.Context, a *Agent) ([]WebhookView, error) {
	ws, err := h.store.Webhooks(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	out := make([]WebhookView, 0, len(ws))
	for _, w := range ws {
		v := WebhookView{Webhook: w}
		if v.Attempts, err = h.store.WebhookAttempts(ctx, w.ID, WebhookLog); err != nil {
			return nil, AsError(err)
		}
		out = append(out, v)
	}
	return out, nil
}

// ownWebhook is the endpoint with this id of the person's agent; any other
// is not_found.
func (h *Hub) ownWebhook(ctx context.Context, u *User, slug, id string) (*Webhook, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	w, err := h.store.Webhook(ctx, id)
	if err == nil && w.AgentID != a.ID {
		err = ErrNoRows
	}
	if err != nil {
		return nil, lookupErr(err, "%s has no webhook %q", a.Handle(), echo(id))
	}
	return w, nil
}

// RemoveWebhook deletes one of the person's agent's endpoints, with the
// calls it still had to make and its log.
func (h *Hub) RemoveWebhook(ctx context.Context, u *User, slug, id string) (*Webhook, error) {
	w, err := h.ownWebhook(ctx, u, slug, id)
	if err != nil {
		return nil, err
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.DeleteWebhook(ctx, w.ID) }); err != nil {
		return nil, AsError(err)
	}
	return w, nil
}

// EnableWebhook switches a disabled endpoint on again, its URL checked
// again as when it was saved; the events that arrive from now on are
// called. Enabling one that is on is not an error.
func (h *Hub) EnableWebhook(ctx context.Context, u *User, slug, id string) (*Webhook, error) {
	w, err := h.ownWebhook(ctx, u, slug, id)
	if err != nil || w.Enabled() {
		return w, err
	}
	if _, err := h.checkWebhookURL(ctx, w.URL); err != nil {
		return nil, err
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetWebhookDisabled(ctx, w.ID, time.Time{}, "") }); err != nil {
		return nil, AsError(err)
	}
	h.hooked.forget()
	w.DisabledAt, w.DisabledReason = time.Time{}, ""
	return w, nil
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
