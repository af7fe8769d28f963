package overview

import (
	"context"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// AgentDetail is one of a person's agents with what they manage of it
// (§1, §2, §3, §5, §18): its tokens, its named sessions, its grants and
// its webhooks and OAuth clients (internal/webhook's and internal/oauth's).
type AgentDetail struct {
	Agent     *hub.Agent
	Tokens    []*hub.Token
	Instances []hub.Instance
	Grants    []hub.GrantView
	A2A       *hub.A2AExposure  // whether A2A clients reach it, and its card's skills (§18)
	Presence  hub.AgentPresence // whether it listens, or when it was last seen, and its sessions' (§19)
}

// TokensInUse counts the agent's tokens that still work at now: neither
// revoked nor expired.
func (d *AgentDetail) TokensInUse(now time.Time) int {
	n := 0
	for _, t := range d.Tokens {
		if t.RevokedAt.IsZero() && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt)) {
			n++
		}
	}
	return n
}

// AgentDetail is the person's agent with this slug, archived or not;
// another's agent is not_found.
func (o *Overview) AgentDetail(ctx context.Context, u *hub.User, slug string) (*AgentDetail, error) {
	a, err := o.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	d := &AgentDetail{Agent: a}
	if d.Tokens, err = o.store.Tokens(ctx, u.ID, a.ID); err != nil {
		return nil, hub.AsError(err)
	}
	if d.Instances, err = o.store.Instances(ctx, a.ID); err != nil {
		return nil, hub.AsError(err)
	}
	if d.Grants, err = o.hub.GrantViews(ctx, a); err != nil {
		return nil, err
	}
	if d.A2A, err = o.hub.A2AExposure(ctx, a.ID); err != nil {
		return nil, err
	}
	presence, err := o.hub.Presences(ctx, []*hub.Agent{a})
	d.Presence = presence[a.ID]
	return d, err
}

// OwnPresence is the person's agents that are not archived, oldest first,
// with the presence of each (§19): what the REST face and the agent pages
// show them.
func (o *Overview) OwnPresence(ctx context.Context, u *hub.User) ([]*hub.Agent, map[string]hub.AgentPresence, error) {
	agents, err := o.store.Agents(ctx, u.ID, false)
	if err != nil {
		return nil, nil, hub.AsError(err)
	}
	p, err := o.hub.Presences(ctx, agents)
	return agents, p, err
}

// AgentInbox is an owner looking at one of their agents' inboxes (§5):
// every waiting message with its processing state, as the agent's
// check_inbox without a session sees it.
func (o *Overview) AgentInbox(ctx context.Context, u *hub.User, slug string, limit int) (*hub.InboxResult, error) {
	a, err := o.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return nil, hub.Invalid("", "%s is archived", a.Handle())
	}
	return o.hub.Inbox(ctx, &hub.Caller{Agent: a, Owner: u}, limit, "")
}
