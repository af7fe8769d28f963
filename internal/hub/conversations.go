package hub

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// participant finds the principal among ps.
func participant(ps []Participant, principalID string) (*Participant, bool) {
	for i := range ps {
		if ps[i].PrincipalID == principalID {
			return &ps[i], true
		}
	}
	return nil, false
}

// access loads a conversation the caller takes part in. Closed conversations
// and ones the caller is not in are not_found alike (§15).
func access(ctx context.Context, r Reader, agentID, conversationID string) (*ConversationView, error) {
	return accessBy(agentID, conversationID, func() (*ConversationView, error) { return r.ConversationView(ctx, conversationID) })
}

// accessBy is access with the conversation read by view.
func accessBy(agentID, conversationID string, view func() (*ConversationView, error)) (*ConversationView, error) {
	if conversationID == "" {
		return nil, invalid("", "{conversation_id} is required: take it from {list_conversations}, {check_inbox} or {open_conversation}")
	}
	missing := notFound("no {conversation} %q is open to you; list yours with {list_conversations}", echo(conversationID))
	v, err := view()
	if errors.Is(err, ErrNoRows) {
		return nil, missing
	}
	if err != nil {
		return nil, AsError(err)
	}
	if v.Conversation.Status == StatusClosed {
		return nil, missing
	}
	if _, ok := participant(v.Participants, agentID); !ok {
		return nil, missing
	}
	return v, nil
}

// lockedAccess is access inside a write transaction, holding the
// conversation until it commits so writers to one conversation take turns.
func lockedAccess(ctx context.Context, tx Tx, agentID, conversationID string) (*ConversationView, error) {
	return lockedAccessBy(ctx, tx, agentID, conversationID, func() (*ConversationView, error) { return tx.ConversationView(ctx, conversationID) })
}

// lockedAccessBy is lockedAccess with the conversation read by view.
func lockedAccessBy(ctx context.Context, tx Tx, agentID, conversationID string, view func() (*ConversationView, error)) (*ConversationView, error) {
	if conversationID != "" {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return nil, err
		}
	}
	return accessBy(agentID, conversationID, view)
}

// directKey names a direct conversation's participant set.
func directKey(ids []string) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// OpenConversation opens the direct conversation between the caller and the
// handles (§4): the same set returns the same open conversation. Each handle
// must be reachable (§3); otherwise the result is a Refusal.
func (h *Hub) OpenConversation(ctx context.Context, c *Caller, handles []string) (*ConversationView, error) {
	if len(handles) == 0 {
		return nil, invalid("", "{handles} is required: give at least one {handle}, like [\"%s\"]", c.Owner.Handle)
	}
	if len(handles) > MaxHandles {
		return nil, invalid("", "{handles} has %d entries; the limit is %d — use {create_thread} for a bigger group", len(handles), MaxHandles)
	}
	var view *ConversationView
	err := retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			targets, asks, err := h.resolveAll(ctx, tx, c.Agent, handles)
			if err != nil {
				return asks, err
			}
			ids := []string{c.Agent.ID}
			for _, p := range targets {
				ids = append(ids, p.ID)
			}
			var opened []*Event
			view, opened, err = h.openDirect(ctx, tx, directKey(ids), creatorAgent(c.Agent), targets)
			return opened, err
		})
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// ThreadSpec describes a new group conversation.
type ThreadSpec struct {
	Title        string
	Goal         string
	Participants []string // handles; the caller is added as owner
}

// CreateThread starts a new group conversation (§4) with the caller as its
// owner and the given participants as members, each reachable (§3).
func (h *Hub) CreateThread(ctx context.Context, c *Caller, s ThreadSpec) (*ConversationView, error) {
	title, err := checkText("title", strings.TrimSpace(s.Title), 1, MaxTitle)
	if err != nil {
		return nil, err
	}
	goal, err := checkText("goal", s.Goal, 0, MaxGoal)
	if err != nil {
		return nil, err
	}
	if len(s.Participants) > MaxMembers {
		return nil, invalid("", "participants has %d entries; the limit is %d", len(s.Participants), MaxMembers)
	}
	var view *ConversationView
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		targets, asks, err := h.resolveAll(ctx, tx, c.Agent, s.Participants)
		if err != nil {
			return asks, err
		}
		var opened []*Event
		view, opened, err = h.insertConversation(ctx, tx, creatorAgent(c.Agent), &Conversation{Kind: KindGroup, Title: title, Goal: goal}, targets)
		return opened, err
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// openDirect returns the direct conversation of key, or makes it with its
// creator and targets, with the events of its opening.
func (h *Hub) openDirect(ctx context.Context, tx Tx, key string, creator Participant, targets []*Principal) (*ConversationView, []*Event, error) {
	conv, err := tx.DirectConversation(ctx, key)
	if err == nil {
		ps, err := tx.Participants(ctx, conv.ID)
		return &ConversationView{Conversation: conv, Participants: ps}, nil, err
	}
	if !errors.Is(err, ErrNoRows) {
		return nil, nil, err
	}
	return h.insertConversation(ctx, tx, creator, &Conversation{Kind: KindDirect, DirectKey: key}, targets)
}

// insertConversation stores conv with the caller and targets as participants
// and tells each other participant with a conversation.opened event.
func (h *Hub) insertConversation(ctx context.Context, tx Tx, creator Participant, conv *Conversation, targets []*Principal) (*ConversationView, []*Event, error) {
	now := h.now()
	conv.ID = NewID(IDConversation, now)
	conv.Status = StatusOpen
	conv.CreatorID = creator.PrincipalID
	conv.CreatedAt, conv.UpdatedAt = now, now
	if err := tx.InsertConversation(ctx, conv); err != nil {
		return nil, nil, err
	}
	creatorRole := RoleMember
	if conv.Kind != KindDirect {
		creatorRole = RoleOwner
	}
	creator.ConversationID, creator.Role, creator.JoinedAt = conv.ID, creatorRole, now
	if err := tx.AddParticipant(ctx, &creator); err != nil {
		return nil, nil, err
	}
	var events []*Event
	joined := []Participant{creator}
	for _, p := range targets {
		if err := checkMix(ctx, tx, p, joined); err != nil {
			return nil, nil, err
		}
		joined = append(joined, participantOf(p))
		if err := tx.AddParticipant(ctx, &Participant{ConversationID: conv.ID, PrincipalID: p.ID, Kind: p.Kind,
			OwnerID: p.OwnerID, Role: RoleMember, JoinedAt: now}); err != nil {
			return nil, nil, err
		}
		events = append(events, &Event{RecipientID: p.ID, Type: EventConversationOpened, ConversationID: conv.ID, CreatedAt: now})
	}
	ps, err := tx.Participants(ctx, conv.ID)
	if err != nil {
		return nil, nil, err
	}
	return &ConversationView{Conversation: conv, Participants: ps}, events, nil
}

// AddParticipant brings a reachable principal into a group conversation the
// caller takes part in (§4) as a member; it then sees the whole history.
// Adding someone already there is not an error.
func (h *Hub) AddParticipant(ctx context.Context, c *Caller, conversationID, handle string) (*ConversationView, error) {
	return h.AddParticipantAs(ctx, c, conversationID, handle, "")
}

// RequestClose marks a group or thread close_requested for its owner to
// confirm (§4); only its creator may ask. Asking twice is not an error.
func (h *Hub) RequestClose(ctx context.Context, c *Caller, conversationID string) (*Conversation, error) {
	var conv *Conversation
	err := h.store.Update(ctx, func(tx Tx) error {
		v, err := lockedAccess(ctx, tx, c.Agent.ID, conversationID)
		if err != nil {
			return err
		}
		conv = v.Conversation
		switch {
		case conv.Kind == KindDirect:
			return invalid("", "a direct {conversation} is not closed; acknowledge its messages and stop replying, or send a no_reply message")
		case conv.CreatorID != c.Agent.ID:
			return &Error{Kind: KindForbidden, Msg: "only the creator of this {conversation} may request its close"}
		case conv.Status == StatusCloseRequested:
			return nil
		}
		conv.Status = StatusCloseRequested
		return tx.SetConversationStatus(ctx, conv.ID, conv.Status, h.now())
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return conv, nil
}

// errDirectNotClosed refuses to close a direct conversation (§4: only a
// group or a thread is closed); opening the same handles again would
// otherwise start a second one beside its history.
var errDirectNotClosed = invalid("", "a direct {conversation} is not closed; its agents stop by acknowledging its messages and not replying")

// CloseConversation is the owner's confirmation of a close (§4): the
// conversation no longer exists for agents, its unacknowledged messages
// leave their inboxes, and each participant hears conversation.closed.
// Closing a closed conversation is not an error.
func (h *Hub) CloseConversation(ctx context.Context, conversationID string) (*Conversation, error) {
	var conv *Conversation
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return nil, err
		}
		var err error
		conv, err = tx.Conversation(ctx, conversationID)
		if errors.Is(err, ErrNoRows) {
			return nil, notFound("no {conversation} has the id %q", echo(conversationID))
		}
		if err != nil || conv.Status == StatusClosed {
			return nil, err
		}
		if conv.Kind == KindDirect {
			return nil, errDirectNotClosed
		}
		now := h.now()
		conv.Status = StatusClosed
		if err := tx.SetConversationStatus(ctx, conv.ID, StatusClosed, now); err != nil {
			return nil, err
		}
		ps, err := tx.Participants(ctx, conv.ID)
		if err != nil {
			return nil, err
		}
		var events []*Event
		for _, p := range ps {
			events = append(events, &Event{RecipientID: p.PrincipalID, Type: EventConversationClosed, ConversationID: conv.ID, CreatedAt: now})
		}
		return events, nil
	})
	if err != nil {
		return nil, err
	}
	return conv, nil
}

// ConversationListing is one row of list_conversations.
type ConversationListing struct {
	ConversationView
	Unread int
	Last   *Message // nil when nothing was sent yet
}

// ConversationPage is a page of conversations and where the next begins
// ("" when this is the last).
type ConversationPage struct {
	Conversations []ConversationListing
	Next          string
}

// ListConversations lists the caller's conversations that are not closed,
// most recently active first (§10.3), a page of at most limit (1–100,
// default 50) at a time: after is a previous page's Next ("" for the
// first).
func (h *Hub) ListConversations(ctx context.Context, c *Caller, after string, limit int) (*ConversationPage, error) {
	limit, err := ConversationsPage.check(limit)
	if err != nil {
		return nil, err
	}
	before, beforeID, err := pageStart(after)
	if err != nil {
		return nil, err
	}
	convs, err := h.store.ConversationsOf(ctx, c.Agent.ID, before, beforeID, limit+1)
	if err != nil {
		return nil, AsError(err)
	}
	return h.conversationPage(ctx, convs, limit, c.Agent.ID)
}

// Pages of conversations go from most to least recently active; a page's
// Next, opaque to clients, is base64url of the last one's "updated ms:id",
// where the next page starts after.

// pageStart decodes where a page of conversations starts: the zero time
// for the first.
func pageStart(after string) (time.Time, string, error) {
	if after == "" {
		return time.Time{}, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(after)
	ms, id, ok := strings.Cut(string(raw), ":")
	n, perr := strconv.ParseInt(ms, 10, 64)
	if err != nil || !ok || perr != nil || idKind(id) != IDConversation {
		return time.Time{}, "", invalid("", "after must be the next of a previous page, as the server gave it")
	}
	return time.UnixMilli(n).UTC(), id, nil
}

// conversationPage cuts convs, fetched one past limit, to a page with its
// Next, and lists each for the reader.
func (h *Hub) conversationPage(ctx context.Context, convs []*Conversation, limit int, readerID string) (*ConversationPage, error) {
	page := &ConversationPage{}
	if len(convs) > limit {
		last := convs[limit-1]
		convs = convs[:limit]
		page.Next = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(last.UpdatedAt.UnixMilli(), 10) + ":" + last.ID))
	}
	var err error
	if page.Conversations, err = h.listings(ctx, convs, readerID); err != nil {
		return nil, err
	}
	return page, nil
}

// listings adds to each conversation its participants, how many messages
// wait unread past the reader's place, and the last message.
func (h *Hub) listings(ctx context.Context, convs []*Conversation, readerID string) ([]ConversationListing, error) {
	out := make([]ConversationListing, 0, len(convs))
	for _, conv := range convs {
		l := ConversationListing{ConversationView: ConversationView{Conversation: conv}}
		var err error
		if l.Participants, err = h.store.Participants(ctx, conv.ID); err != nil {
			return nil, AsError(err)
		}
		// Only a participant has a place to count from; an owner in
		// their agent's conversation has none.
		if _, in := participant(l.Participants, readerID); in {
			if l.Unread, err = h.store.Unread(ctx, conv.ID, readerID); err != nil {
				return nil, AsError(err)
			}
		}
		if conv.LastSeq > 0 {
			if l.Last, err = h.store.MessageBySeq(ctx, conv.ID, conv.LastSeq); err != nil {
				return nil, AsError(err)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// ConversationReads are the queries of conversations (Reader embeds them).
type ConversationReads interface {
	Conversation(ctx context.Context, id string) (*Conversation, error)
	// ConversationView is Conversation and its Participants in one read.
	ConversationView(ctx context.Context, id string) (*ConversationView, error)
	// TakesPart reports whether the principal takes part in the
	// conversation and it is not closed: access without loading the
	// conversation, whatever its size.
	TakesPart(ctx context.Context, conversationID, principalID string) (bool, error)
	// DirectConversation finds the open or close-requested direct
	// conversation whose participant set has this key.
	DirectConversation(ctx context.Context, key string) (*Conversation, error)
	// Participants lists the current (not left) participants, oldest first,
	// with their handle and whether the agent is archived.
	Participants(ctx context.Context, conversationID string) ([]Participant, error)
	// ConversationsOf lists the conversations the principal takes part in that
	// are not closed, most recently active first, from before (updated time,
	// then id) on when not zero.
	ConversationsOf(ctx context.Context, principalID string, before time.Time, beforeID string, limit int) ([]*Conversation, error)
	// OwnersConversations lists the conversations that are not closed in
	// which the person or one of their agents takes part, most recently
	// active first, from before (updated time, then id) on when not zero.
	OwnersConversations(ctx context.Context, ownerID string, before time.Time, beforeID string, limit int) ([]*Conversation, error)
	// PausedConversations lists the open, paused conversations in which
	// the person or one of their agents takes part, latest pause first.
	PausedConversations(ctx context.Context, ownerID string) ([]*Conversation, error)
}

// ConversationWrites are the writes of conversations (Tx embeds them).
type ConversationWrites interface {
	// LockConversation holds the conversation until the transaction ends,
	// so transactions acting on one conversation take turns (a no-op where
	// one writer commits everything).
	LockConversation(ctx context.Context, id string) error
	InsertConversation(ctx context.Context, c *Conversation) error
	AddParticipant(ctx context.Context, p *Participant) error
	// LeaveConversation ends the principal's part in a conversation.
	LeaveConversation(ctx context.Context, conversationID, principalID string, at time.Time) error
	SetConversationStatus(ctx context.Context, id, status string, at time.Time) error
	// NextSeq increments the conversation's last seq under its row lock and
	// returns the new value, so seq order is commit order (§13).
	NextSeq(ctx context.Context, conversationID string, at time.Time) (int64, error)
}

// Others are the listed participants other than the person with this id
// and their agents: whom the conversation is with, as that person sees
// it; all of them when only the person and their own agents take part.
func (v *ConversationView) Others(userID string) []Participant {
	var out []Participant
	listed := v.Listed()
	for _, p := range listed {
		if p.OwnerID != userID {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return listed
	}
	return out
}
