package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Consent between owners (§3): an agent of a reaches person b, or b's
// agents, when (1) a and b are contacts, (2) a granted the agent that reach,
// and (3) b let the agent in (an inbound ask b approved). A public agent
// needs none of it: its owner's flag is the consent (§1).

// reachCheck decides whether agent from may talk to principal to. It returns
// nil when allowed; a Refusal with status pending_approval and the person to
// ask when only (3) is missing; a Refusal denied whose reason names the
// step to take otherwise.
func reachCheck(ctx context.Context, r Reader, from *Agent, to *Principal) (string, error) {
	switch {
	case to.ID == from.ID:
		return "", deny("self", "an agent cannot message itself; sessions of one agent meet in a thread of its owner's home project: "+
			"call open_thread with project_id %q and a title your sessions share, like \"Plan\"", homeProjectID(from.OwnerID))
	case to.OwnerID == from.OwnerID:
		return "", nil // its own owner, or a sibling
	}
	if publicAgent(to) {
		return "", nil // anyone → a public agent (§3)
	}
	return consented(ctx, r, from, to)
}

// publicAgent reports whether to is a public agent no one archived: anyone
// may reach it (§3); archiving wins (§1). A principal made from a
// participant row carries no Agent; the row's own Public flag speaks for it
// (stillReachable).
func publicAgent(to *Principal) bool {
	return to.Kind == PrincipalAgent && to.Agent != nil && to.Agent.Public && !to.Agent.Archived()
}

// consented is reachCheck's steps (1)–(3) for principal to of another
// owner than from's.
func consented(ctx context.Context, r Reader, from *Agent, to *Principal) (string, error) {
	b := to.OwnerID
	other := strings.SplitN(to.Handle, "/", 2)[0]
	c, err := r.Contact(ctx, from.OwnerID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	if c == nil || c.Status != ContactAccepted {
		return "", deny("contact", "%s and %s are not contacts; ask your owner %s to send %s a contact request", from.OwnerHandle, other, from.OwnerHandle, other)
	}
	g, err := r.Grant(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	switch {
	case to.Kind == PrincipalUser && (g == nil || !g.AllowHuman):
		return "", deny("grant", "your owner has not granted you reach to %s; ask with request_grant(contact_handle=%q, allow_human=true, reason=\"why you need it\")", other, other)
	case to.Kind == PrincipalAgent && (g == nil || !g.AllowAgents):
		return "", deny("grant", "your owner has not granted you reach to %s's agents; ask with request_grant(contact_handle=%q, allow_agents=true, reason=\"why you need it\")", other, other)
	}
	ask, err := r.InboundAsk(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	switch {
	case ask != nil && ask.Status == AskApproved:
		return "", nil
	case ask != nil && ask.Status == AskDenied:
		return "", deny("denied", "%s declined to let you in; that stands until %s approves your ask after all (they can, under approvals); do not ask again, tell your owner", other, other)
	}
	return b, &Refusal{Status: StatusPendingApproval,
		Reason: fmt.Sprintf("pending_approval: %s has not let you in yet and was asked; you will hear inbound.decided, then conversation.opened", other)}
}

// Inbound ask statuses.
const (
	AskPending  = "pending"
	AskApproved = "approved"
	AskDenied   = "denied"
)

// askIn records (or refreshes) the agent's inbound ask of person b for the
// handles, and tells b with inbound.ask.
func (h *Hub) askIn(ctx context.Context, tx Tx, from *Agent, b string, handles []string) ([]*Event, error) {
	now := h.now()
	ask, err := tx.InboundAsk(ctx, from.ID, b)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	if ask == nil {
		ask = &InboundAsk{ID: NewID(IDInboundAsk, now), AgentID: from.ID, UserID: b}
	}
	ask.Handles, ask.Status, ask.CreatedAt, ask.DecidedAt = handles, AskPending, now, time.Time{}
	if err := tx.PutInboundAsk(ctx, ask); err != nil {
		return nil, err
	}
	data, _ := json.Marshal(map[string]any{"ask_id": ask.ID, "agent": from.Handle(), "handles": handles})
	ev := &Event{RecipientID: b, Type: EventInboundAsk, Data: data, CreatedAt: now}
	return []*Event{ev}, nil
}

// resolveAll resolves handles (dropping duplicates) and checks reach to
// each by mayAnswer — the rule sends and list_contacts use, so an agent
// may open a conversation with one it may answer: the targets, or a
// Refusal. When only inbound approval is missing,
// it asks each person concerned for the handles and returns the inbound.ask
// events with the pending_approval Refusal wrapped in commitThen, so that
// update keeps the asks though the call is refused.
func (h *Hub) resolveAll(ctx context.Context, tx Tx, from *Agent, handles []string) ([]*Principal, []*Event, error) {
	seen := map[string]bool{}
	var out []*Principal
	var pending []string
	var refusal error
	for _, hd := range handles {
		p, err := resolve(ctx, tx, hd)
		if err != nil {
			return nil, nil, err
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		b, err := mayAnswer(ctx, tx, from, p)
		switch {
		case err == nil:
			out = append(out, p)
		case isPending(err):
			pending, refusal = append(pending, b), err
		default:
			return nil, nil, err
		}
	}
	if len(pending) == 0 {
		return out, nil, nil
	}
	var asks []*Event
	for _, b := range pending {
		evs, err := h.askIn(ctx, tx, from, b, handles)
		if err != nil {
			return nil, nil, err
		}
		asks = append(asks, evs...)
	}
	return nil, asks, &commitThen{refusal}
}

// refused reports a contract outcome of a rule: a Refusal, one committed
// after its side effects (commitThen), or an Error that is not internal.
func refused(err error) bool {
	var c *commitThen
	var r *Refusal
	var e *Error
	return errors.As(err, &c) || errors.As(err, &r) || (errors.As(err, &e) && e.Kind != KindInternal)
}

// isPending reports a pending_approval refusal.
func isPending(err error) bool {
	var r *Refusal
	return errors.As(err, &r) && r.Status == StatusPendingApproval
}

// checkMix refuses to bring principal np into a conversation where a
// principal of another owner takes part unless the two owners are contacts:
// a conversation shows everyone in it to everyone, so each pair of owners in
// it must have agreed (§3). A pair with a public agent in it has: its
// owner's flag is consent to meet anyone (§3 "anyone → a public agent"), so
// a public agent joins any conversation, and anyone joins one it is in, with
// no contact between its owner and the others'.
func checkMix(ctx context.Context, r Reader, np *Principal, ps []Participant) error {
	if publicAgent(np) {
		return nil
	}
	seen := map[string]bool{np.OwnerID: true}
	for _, p := range ps {
		if seen[p.OwnerID] || p.Archived || p.Public {
			continue
		}
		seen[p.OwnerID] = true
		c, err := r.Contact(ctx, np.OwnerID, p.OwnerID)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		if c == nil || c.Status != ContactAccepted {
			owner := strings.SplitN(p.Handle, "/", 2)[0]
			return deny("contact", "%s cannot join a {conversation} with %s: their owners are not contacts", np.Handle, owner)
		}
	}
	return nil
}

// agentPrincipal is a as a principal of reach.
func agentPrincipal(a *Agent) *Principal {
	return &Principal{ID: a.ID, Kind: PrincipalAgent, Handle: a.Handle(), OwnerID: a.OwnerID, Agent: a}
}

// participantOf is p as a principal of reach, as joining makes it.
func participantOf(p *Principal) Participant {
	return Participant{PrincipalID: p.ID, Kind: p.Kind, Handle: p.Handle, OwnerID: p.OwnerID, Public: publicAgent(p)}
}

// mayAnswer decides whether agent from may speak to principal to in a
// conversation (§3): reachCheck's answer, except that consent given one way
// covers the answer — an agent of another owner that may reach from may be
// answered by it. One rule for a send (stillReachable) and for what
// list_contacts tells the agent (ListContacts). The answer counts only
// consent (1)–(3): that anyone may reach a public agent lets it answer
// everyone in a conversation others brought it into (stillReachable), not
// open conversations with every agent there is (§1: being public is consent to be
// reached, and the reach of every other agent stays as it was).
func mayAnswer(ctx context.Context, r Reader, from *Agent, to *Principal) (string, error) {
	b, err := reachCheck(ctx, r, from, to)
	if err == nil || to.Kind != PrincipalAgent || to.OwnerID == from.OwnerID {
		return b, err
	}
	other := to.Agent
	if other == nil {
		var aerr error
		if other, aerr = r.AgentByID(ctx, to.ID); aerr != nil {
			return "", aerr
		}
	}
	if _, back := consented(ctx, r, other, agentPrincipal(from)); back == nil {
		return "", nil
	}
	return b, err
}

// stillReachable refuses a send into conversation v when a participant of
// another owner is no longer within reach (a contact ended, a grant
// withdrawn, an inbound ask denied), by mayAnswer. A public participant is
// within everyone's reach (§3 "anyone → a public agent"). A public sender
// that someone else brought into the conversation, as anyone may, answers
// everyone in it, since each of them may reach it; in one it started itself
// its own reach applies, so a person who declined to let it in stays
// declined (§3).
func stillReachable(ctx context.Context, tx Tx, from *Agent, v *ConversationView) error {
	ps := v.Participants
	// The rows are read in this transaction: an owner's change of the
	// flag counts from the next send, whatever the caller was read with.
	if self, ok := participant(ps, from.ID); ok && self.Public && !self.Archived && v.Conversation.CreatorID != from.ID {
		return nil
	}
	for _, p := range ps {
		if p.Archived || p.OwnerID == from.OwnerID || p.Public {
			continue
		}
		to := &Principal{ID: p.PrincipalID, Kind: p.Kind, Handle: p.Handle, OwnerID: p.OwnerID}
		_, err := mayAnswer(ctx, tx, from, to)
		if isPending(err) {
			return deny("denied", "%s has not let you in; ask again with {open_conversation}", p.Handle)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// personMayAdd decides whether person u may bring principal p into a
// conversation: themselves, their own agents, their accepted contacts and
// any public agent (§3: person → own agents; person ↔ person as contacts;
// anyone → a public agent). Otherwise a denied Refusal names the step to
// take; an archived agent is not_found, as resolve has it.
func personMayAdd(ctx context.Context, r Reader, u *User, p *Principal) error {
	if p.Kind == PrincipalUser {
		if p.ID == u.ID {
			return nil
		}
		c, err := r.Contact(ctx, u.ID, p.ID)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
		if c == nil || c.Status != ContactAccepted {
			return deny("contact", "you and %s are not contacts; send %s a contact request first, and bring them in once they accept", p.Handle, p.Handle)
		}
		return nil
	}
	a := p.Agent
	if a == nil {
		var err error
		if a, err = r.AgentByID(ctx, p.ID); err != nil {
			return lookupErr(err, "no agent has the {handle} %q", p.Handle)
		}
	}
	switch {
	case a.Archived():
		return notFound("no agent has the {handle} %q", p.Handle)
	case a.OwnerID == u.ID || a.Public:
		return nil
	}
	// Another person's private agent is told apart from none at all by no
	// one but its owner (§15).
	return notFound("no agent has the {handle} %q; check it with {list_contacts}", p.Handle)
}

// ---- inbound asks

// DecideInbound is person u letting another owner's agent in (or not). The
// agent hears inbound.decided; on approval the conversation it asked for is
// opened and it hears conversation.opened. A decision may be changed later.
func (h *Hub) DecideInbound(ctx context.Context, u *User, id string, approve bool) (*InboundAsk, error) {
	var ask *InboundAsk
	err := retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			var err error
			ask, err = tx.InboundAskByID(ctx, id)
			if errors.Is(err, ErrNoRows) || (err == nil && ask.UserID != u.ID) {
				return nil, notFound("no inbound ask %q waits for %s", echo(id), u.Handle)
			}
			if err != nil {
				return nil, err
			}
			now := h.now()
			want := AskDenied
			if approve {
				want = AskApproved
			}
			changed, err := tx.SetInboundAskStatus(ctx, ask.ID, want, now)
			if err != nil || !changed {
				ask.Status = want
				return nil, err // the same decision again: nothing new to tell
			}
			ask.Status, ask.DecidedAt = want, now
			data, _ := json.Marshal(map[string]any{"ask_id": ask.ID, "decision": ask.Status, "by": u.Handle})
			events := []*Event{{RecipientID: ask.AgentID, Type: EventInboundDecided, Data: data, CreatedAt: now},
				decided(u, ApprovalInboundAsk, ask.ID, ask.Status, now)}
			if !approve {
				return events, nil
			}
			opened, err := h.openFor(ctx, tx, ask)
			if err != nil {
				return nil, err
			}
			return append(events, opened...), nil
		})
	})
	if err != nil {
		return nil, err
	}
	return ask, nil
}

// openFor opens the direct conversation an approved ask was for, when every
// handle is now reachable, and tells the agent with conversation.opened.
// When a handle is out of reach again (a grant withdrawn, another person
// still to ask) nothing opens and the agent asks again; any other failure
// is returned, so a decision is never reported done when it was not.
func (h *Hub) openFor(ctx context.Context, tx Tx, ask *InboundAsk) ([]*Event, error) {
	a, err := tx.AgentByID(ctx, ask.AgentID)
	if err != nil || a.Archived() {
		return nil, err
	}
	targets, asks, err := h.resolveAll(ctx, tx, a, ask.Handles)
	if refused(err) {
		return asks, nil
	}
	if err != nil {
		return nil, err
	}
	ids := []string{a.ID}
	for _, p := range targets {
		ids = append(ids, p.ID)
	}
	conv, err := tx.DirectConversation(ctx, directKey(ids))
	var events []*Event
	switch {
	case errors.Is(err, ErrNoRows):
		var v *ConversationView
		if v, events, err = h.insertConversation(ctx, tx, creatorAgent(a), &Conversation{Kind: KindDirect, DirectKey: directKey(ids)}, targets); err != nil {
			return nil, err
		}
		conv = v.Conversation
	case err != nil:
		return nil, err
	}
	ev := &Event{RecipientID: a.ID, Type: EventConversationOpened, ConversationID: conv.ID, CreatedAt: h.now()}
	return append(events, ev), nil
}

// InboundAskReads are the queries of consent (Reader embeds them).
type InboundAskReads interface {
	InboundAsk(ctx context.Context, agentID, userID string) (*InboundAsk, error)
	InboundAskByID(ctx context.Context, id string) (*InboundAsk, error)
	// InboundAsks lists the asks made of the person, oldest first: only
	// those waiting when pending, else every one (decided ones may be
	// changed).
	InboundAsks(ctx context.Context, userID string, pending bool) ([]*InboundAsk, error)
}

// InboundAskWrites are the writes of consent (Tx embeds them).
type InboundAskWrites interface {
	// PutInboundAsk stores the agent's ask of the person (one per pair).
	PutInboundAsk(ctx context.Context, a *InboundAsk) error
	// SetInboundAskStatus records a decision and reports whether it changed
	// anything (false when the ask already had that status).
	SetInboundAskStatus(ctx context.Context, id, status string, at time.Time) (bool, error)
	// DeleteInboundAsk drops an inbound ask (none by that id: nothing to do).
	DeleteInboundAsk(ctx context.Context, id string) error
}
