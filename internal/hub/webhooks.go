package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/netip"
	"net/url"
	"strings"
	"sync"
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
	MaxWebhooks    = 5                // endpoints per agent
	WebhookRate    = 5                // calls a second to one endpoint, from each server process
	WebhookBurst   = 10               // calls to one endpoint at once, above WebhookRate
	WebhookLog     = 20               // attempts kept in each endpoint's delivery log
	WebhookTimeout = 10 * time.Second // one call, from connecting to the answer's last byte

	webhookLease = 2 * time.Minute // a claim: well over WebhookTimeout
	webhookBatch = 100             // calls claimed at once
	webhookError = 300             // code points of an attempt's error kept in the log
)

// WebhookSecretPrefix starts every endpoint's signing secret.
const WebhookSecretPrefix = "whsec_"

// Backoff is a retry schedule: retry n waits First·2^(n-1), at most Max,
// moved at random by up to ±Jitter of itself; a call is retried until For
// after it was made — the last time at that moment — and then given up.
type Backoff struct {
	First, Max time.Duration
	Jitter     float64
	For        time.Duration
}

// WebhookRetry is how a failing webhook call is retried (§18): after about
// 10 s, 20 s, 40 s … and then every 2 h, for 24 h; then its endpoint is
// disabled and the owner told.
var WebhookRetry = Backoff{First: 10 * time.Second, Max: 2 * time.Hour, Jitter: 0.2, For: 24 * time.Hour}

// next is when a call made at created, whose attempt-th attempt failed at
// now, is tried again, r in [0, 1) drawing the jitter; false when it has
// been tried for long enough.
func (b Backoff) next(created, now time.Time, attempt int, r float64) (time.Time, bool) {
	end := created.Add(b.For)
	if !now.Before(end) {
		return time.Time{}, false
	}
	d := b.First
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	d = time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*r))
	if at := now.Add(d); at.Before(end) {
		return at, true
	}
	return end, true
}

// What became of a call's attempt: the values of
// palaver_webhook_deliveries_total{outcome}.
const (
	WebhookDelivered = "delivered" // a 2xx answer: the call leaves the outbox
	WebhookFailed    = "failed"    // no 2xx answer: it is retried later
	WebhookGaveUp    = "gave_up"   // failed for WebhookRetry.For: its endpoint is disabled
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
// wrong with it: an absolute https URL without user info or fragment whose
// host is — every address it resolves to — one AllowFetch lets through.
// The sender checks each address again when it connects, as DNS changes.
func (h *Hub) checkWebhookURL(ctx context.Context, raw string) (string, error) {
	s, err := checkText("url", strings.TrimSpace(raw), 1, MaxURL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	bad := func(format string, args ...any) error {
		return invalid("", "the webhook URL %q "+format, append([]any{echo(s)}, args...)...)
	}
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", bad("is not an absolute URL; give one like https://example.com/palaver")
	case u.Scheme != "https":
		return "", bad("is not https; webhooks are sent over https only")
	case u.User != nil:
		return "", bad("has user info; put no credentials in it (calls are signed with the endpoint's secret)")
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
	}
	for _, ip := range addrs {
		if !h.AllowFetch(host, ip) {
			return "", bad("is at %s, a private, loopback, link-local or otherwise non-public address; webhooks call only public addresses unless the server's admin lets the host through (palaver serve --allow-private-host %s)", ip.Unmap(), echo(host))
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

// waiting reports whether a wait of the principal is parked in this
// process.
func (h *Hub) waiting(principalID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range h.waits[principalID] {
		if w.Err() == nil {
			return true
		}
	}
	return false
}

// ownDoing reports whether an event tells its agent of what it did itself
// — its own words coming back, its send being held — which no call wakes
// it for (or an agent woken to send would wake itself again).
func ownDoing(e *Event) bool {
	return e.Type == EventMessagePending || (e.Type == EventMessageNew && e.Message != nil && e.Message.SenderID == e.RecipientID)
}

// queueWebhooks puts into the outbox, in the transaction that stores the
// events, a call to each enabled endpoint of every agent an event is for
// that has no wait parked in this process, unless the event is its own
// doing. It reports whether it queued any. A wait parked on another replica
// cannot be seen from here: that agent is called anyway, at worst once
// more than it needed.
func (h *Hub) queueWebhooks(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var calls []*WebhookCall
	var hooks map[string][]*Webhook
	var hooked map[string]bool
	now := h.now()
	for _, e := range events {
		if idKind(e.RecipientID) != IDAgent || ownDoing(e) || h.waiting(e.RecipientID) {
			continue
		}
		if hooked == nil {
			var err error
			if hooked, err = h.hooked.agents(ctx, tx, now); err != nil {
				return false, err
			}
		}
		if !hooked[e.RecipientID] {
			continue
		}
		ws, seen := hooks[e.RecipientID]
		if !seen {
			all, err := tx.Webhooks(ctx, e.RecipientID)
			if err != nil {
				return false, err
			}
			for _, w := range all {
				if w.Enabled() {
					ws = append(ws, w)
				}
			}
			if hooks == nil {
				hooks = map[string][]*Webhook{}
			}
			hooks[e.RecipientID] = ws
		}
		if len(ws) == 0 {
			continue
		}
		payload, err := json.Marshal(WebhookPayload{Type: e.Type, Timestamp: FormatTime(now), Data: WebhookData{
			Agent: ws[0].AgentHandle, ConversationID: e.ConversationID, MessageID: e.MessageID, Cursor: h.cursor(e.RecipientID, e.ID-1)}})
		if err != nil {
			return false, err
		}
		for _, w := range ws {
			calls = append(calls, &WebhookCall{ID: NewID(IDWebhookCall, now), WebhookID: w.ID, EventID: e.ID, Type: e.Type,
				Payload: payload, CreatedAt: now, DueAt: now})
		}
	}
	if len(calls) == 0 {
		return false, nil
	}
	return true, tx.InsertWebhookCalls(ctx, calls)
}

// kickWebhooks starts a delivery pass now rather than at the next tick.
func (h *Hub) kickWebhooks() {
	select {
	case h.hookKick <- struct{}{}:
	default:
	}
}

// WebhookPass is what one DeliverWebhooks did: how many calls it claimed,
// and how many of them ended with each outcome (the rest wait for their
// endpoint's rate, or for a server that is stopping, and are sent later).
type WebhookPass struct {
	Claimed  int
	Outcomes map[string]int
}

// DeliverWebhooks makes the webhook calls that are due (§18): it claims up
// to a batch of them, so no other replica sends them meanwhile, and calls
// each endpoint's in turn, the endpoints at once. A call answered 2xx
// leaves the outbox; any other is retried on WebhookRetry's schedule with
// the same webhook-id, and one that has failed for WebhookRetry.For
// disables its endpoint, dropping its calls, and tells the owner
// (webhook.disabled). Calls beyond an endpoint's WebhookRate wait their
// turn, uncounted. A hub with no WebhookSender sends nothing.
func (h *Hub) DeliverWebhooks(ctx context.Context) (WebhookPass, error) {
	pass := WebhookPass{Outcomes: map[string]int{}}
	if h.webhooks == nil {
		return pass, nil
	}
	now := h.now()
	next, err := h.store.NextWebhookCall(ctx)
	if err != nil {
		return pass, AsError(err)
	}
	if next.IsZero() || next.After(now) {
		return pass, nil
	}
	var calls []*WebhookCall
	err = h.store.Update(ctx, func(tx Tx) error {
		var err error
		calls, err = tx.ClaimWebhookCalls(ctx, now, now.Add(webhookLease), webhookBatch)
		return err
	})
	if err != nil {
		return pass, AsError(err)
	}
	pass.Claimed = len(calls)
	byHook := map[string][]*WebhookCall{}
	var order []string
	for _, c := range calls {
		if byHook[c.WebhookID] == nil {
			order = append(order, c.WebhookID)
		}
		byHook[c.WebhookID] = append(byHook[c.WebhookID], c)
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, id := range order {
		wg.Go(func() {
			for _, c := range byHook[id] {
				outcome, err := h.callWebhook(ctx, c)
				mu.Lock()
				if outcome != "" {
					pass.Outcomes[outcome]++
				}
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if outcome == WebhookGaveUp {
					return // the endpoint is off, its other calls dropped
				}
			}
		})
	}
	wg.Wait()
	return pass, errors.Join(errs...)
}

// callWebhook makes one claimed call and records how it went; it returns
// the outcome, or "" when the call was not made (over its endpoint's rate,
// or the server is stopping: the claim lapses and it is made again).
func (h *Hub) callWebhook(ctx context.Context, c *WebhookCall) (string, error) {
	now := h.now()
	if wait := h.hookRate.take(now, c.WebhookID, 1, WebhookRate, WebhookBurst); wait > 0 {
		c.DueAt = now.Add(wait)
		if err := h.store.Update(ctx, func(tx Tx) error { return tx.RescheduleWebhookCall(ctx, c) }); err != nil {
			return "", AsError(err)
		}
		return "", nil
	}
	host := ""
	if u, err := url.Parse(c.URL); err == nil {
		host = u.Hostname()
	}
	sctx, cancel := context.WithTimeout(ctx, WebhookTimeout)
	res := h.webhooks.Send(sctx, c, now, func(ip netip.Addr) bool { return h.AllowFetch(host, ip) })
	cancel()
	if ctx.Err() != nil {
		return "", nil
	}
	a := &WebhookAttempt{ID: NewID(IDWebhookAttempt, now), WebhookID: c.WebhookID, CallID: c.ID, Type: c.Type, At: now,
		Status: res.Status, Duration: res.Duration}
	if res.Err != nil {
		a.Status, a.Error = 0, Preview(cleanText(res.Err.Error()), webhookError)
	}
	var outcome string
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.InsertWebhookAttempt(ctx, a, WebhookLog); err != nil {
			return nil, err
		}
		if a.OK() {
			outcome = WebhookDelivered
			return nil, tx.DeleteWebhookCall(ctx, c.ID)
		}
		next, retry := WebhookRetry.next(c.CreatedAt, now, c.Attempts+1, mrand.Float64())
		if retry {
			outcome = WebhookFailed
			r := *c
			r.Attempts, r.DueAt = c.Attempts+1, next
			return nil, tx.RescheduleWebhookCall(ctx, &r)
		}
		outcome = WebhookGaveUp
		reason := fmt.Sprintf("its calls failed for %d hours; the last: %s", int(WebhookRetry.For.Hours()), a.Problem())
		if err := tx.SetWebhookDisabled(ctx, c.WebhookID, now, reason); err != nil {
			return nil, err
		}
		data, err := json.Marshal(map[string]string{"agent": c.AgentHandle, "webhook_id": c.WebhookID, "url": c.URL, "reason": reason})
		if err != nil {
			return nil, err
		}
		return []*Event{{RecipientID: c.OwnerID, Type: EventWebhookDisabled, Data: data, CreatedAt: now}}, nil
	})
	if err != nil {
		return "", err
	}
	if outcome == WebhookGaveUp {
		h.log.Warn("webhook disabled", "agent", c.AgentHandle, "webhook", c.WebhookID, "url", c.URL, "last", a.Problem())
	}
	return outcome, nil
}

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

// RunWebhooks delivers webhook calls until ctx ends (palaver serve runs
// it): at once when a change here queued some, and every period otherwise
// (calls queued by other replicas and retries falling due), again at once
// while passes claim full batches. count, when not nil, hears each pass's
// outcomes.
func (h *Hub) RunWebhooks(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		pass, err := h.DeliverWebhooks(ctx)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("delivering webhooks", "err", err)
		}
		if count != nil {
			for o, n := range pass.Outcomes {
				count(o, n)
			}
		}
		if pass.Claimed == webhookBatch && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.hookKick:
		}
	}
}

// hookedAgents is which agents have an enabled endpoint, as this process
// last read it, so that an event for an agent with none — nearly every
// send's — costs the outbox no look-up. It is read again at most every
// hookedFor: an endpoint made on another replica is called for from then
// on; one made here, at once.
type hookedAgents struct {
	mu   sync.Mutex
	ids  map[string]bool
	read time.Time // zero: to be read
}

// hookedFor is how long hookedAgents trusts what it read.
const hookedFor = time.Second

// agents is the set of agents with an enabled endpoint, read through r
// when what was read is older than hookedFor.
func (k *hookedAgents) agents(ctx context.Context, r Reader, now time.Time) (map[string]bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.read.IsZero() && now.Sub(k.read) < hookedFor && !now.Before(k.read) {
		return k.ids, nil
	}
	ids, err := r.WebhookAgents(ctx)
	if err != nil {
		return nil, err
	}
	k.ids, k.read = make(map[string]bool, len(ids)), now
	for _, id := range ids {
		k.ids[id] = true
	}
	return k.ids, nil
}

// forget makes the next event read the set again.
func (k *hookedAgents) forget() {
	k.mu.Lock()
	k.read = time.Time{}
	k.mu.Unlock()
}
