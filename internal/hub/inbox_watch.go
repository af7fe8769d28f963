package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Following an inbox (§19 "MCP push where a client holds a stream"): a
// client holding a stream is told each time what its agent's inbox lists
// changes — a message delivered, one acknowledged — and the stream ends
// when the server shuts down or the token stops being good.

// inboxRecheck is how often a watch looks again at its token and inbox
// when nothing woke it: a token revoked by another process on the same
// database (an admin command on SQLite), or one that expired, ends the
// stream within this time.
const inboxRecheck = time.Minute

// WatchInbox follows the caller's inbox: it calls changed once when it
// starts (the inbox as it stands: a change from then on is never lost,
// for it subscribes before it reads), then after each change of what
// Inbox lists, until changed returns false or ctx ends (nil). When the
// server shuts down it returns ErrShutdown; when the caller's token is
// revoked or expires, or its agent is archived, the KindUnauthenticated
// Error saying so. It holds one of the agent's waits while it lasts, and
// the agent listens meanwhile (presence).
func (h *Hub) WatchInbox(ctx context.Context, c *Caller, changed func() bool) error {
	if err := c.Require(ScopeRead); err != nil {
		return err
	}
	// A stream holds one of the agent's waits, as wait_for_messages does
	// (§6), so no agent follows its inbox without bound.
	ctx, release, err := h.acquireWait(ctx, c.Agent.ID, "", h.settings.WaitsPerAgent, "across your waits and inbox streams")
	if err != nil {
		return err
	}
	defer release()
	// A client holding a stream hears at once: the agent listens (§19).
	defer h.listen(ctx, c.Agent.ID, "")()
	// Subscribe before the first read: a commit after this point wakes
	// us, and one before it is seen by the read (§13).
	wake, cancel := h.waker.Subscribe(c.Agent.ID)
	defer cancel()
	last, err := h.inboxMark(ctx, c)
	if err != nil {
		return err
	}
	if !changed() {
		return nil
	}
	tick := time.NewTicker(inboxRecheck)
	defer tick.Stop()
	for {
		select {
		case <-wake:
		case <-tick.C:
		case <-h.stop:
			return ErrShutdown
		case <-ctx.Done():
			return nil
		}
		if err := h.stillGood(ctx, c); err != nil {
			return err
		}
		mark, err := h.inboxMark(ctx, c)
		if err != nil {
			return err
		}
		if mark == last {
			continue
		}
		last = mark
		if !changed() {
			return nil
		}
	}
}

// ErrShutdown ends what follows the hub when the server shuts down.
var ErrShutdown = errors.New("the server is shutting down")

// inboxMark is what the caller's inbox lists, in brief: a change of it is
// a change of the inbox.
func (h *Hub) inboxMark(ctx context.Context, c *Caller) (string, error) {
	r, err := h.Inbox(ctx, c, 0, "")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %d", r.Total, r.More, len(r.Answers))
	for _, it := range r.Items {
		fmt.Fprintf(&b, "|%s %s %d %t", it.Delivery.MessageID, it.Delivery.State, it.Delivery.Attempts, it.AlreadyRead())
	}
	for _, q := range r.Answers {
		b.WriteString("|" + q.ID)
	}
	return b.String(), nil
}

// stillGood checks again what authentication checked of the caller: its
// token is neither revoked nor expired and its agent not archived.
func (h *Hub) stillGood(ctx context.Context, c *Caller) error {
	unauth := func(msg string) error { return &Error{Kind: KindUnauthenticated, Msg: msg} }
	t, err := h.store.TokenByID(ctx, c.TokenID)
	if errors.Is(err, ErrNoRows) {
		return unauth("the token is not known to this server")
	}
	if err != nil {
		return AsError(err)
	}
	a, err := h.store.AgentByID(ctx, c.Agent.ID)
	if err != nil {
		return AsError(err)
	}
	switch {
	case a.Archived():
		return unauth("the agent " + a.Handle() + " is archived")
	case !t.RevokedAt.IsZero():
		return unauth("the token was revoked")
	case !t.ExpiresAt.IsZero() && !h.now().Before(t.ExpiresAt):
		return unauth("the token expired")
	}
	return nil
}

// inboxChanged wakes whatever follows these agents' inboxes after a commit
// that changed them but stored no event for them (an acknowledgement), or
// ended their tokens (a revocation). A parked wait it wakes finds nothing
// new and parks again.
func (h *Hub) inboxChanged(agentIDs ...string) {
	var ids []string
	for _, id := range agentIDs {
		if id != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		h.waker.Publish(ids)
	}
}
