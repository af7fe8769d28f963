package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Sessions sharing one agent (§5 "Instances"): each named session has its
// own places; the session that holds a conversation answers what is
// addressed to nobody there; a session not seen for HoldLapse lets go.

// HoldLapse is how long a session may go unseen before it lets go of the
// conversations it held (§5).
const HoldLapse = 6 * time.Hour

// liveSince is the oldest sighting of a session that still holds.
func (h *Hub) liveSince() time.Time { return h.now().Add(-HoldLapse) }

// liveHolders maps each conversation the agent holds to its holding session,
// leaving out holds whose session has lapsed.
func (h *Hub) liveHolders(ctx context.Context, r Reader, agentID string) (map[string]string, error) {
	holds, err := r.Holds(ctx, agentID)
	if err != nil {
		return nil, err
	}
	now := h.now()
	out := make(map[string]string, len(holds))
	for _, hd := range holds {
		if hd.live(now) {
			out[hd.ConversationID] = hd.Instance
		}
	}
	return out, nil
}

// live reports whether the hold's session was seen within HoldLapse of
// now: a session not seen for longer lets go of what it held (§5).
func (hd Hold) live(now time.Time) bool { return hd.LastSeen.After(now.Add(-HoldLapse)) }

// speakerHolds makes the session that spoke in a conversation its holder
// (§5), as of now — unless another session of the agent holds it and is
// live: speaking takes a conversation nobody holds, or one whose holder
// lapsed, or keeps one the speaker holds; only claim_conversation with
// takeover moves a live claim.
func speakerHolds(ctx context.Context, tx Tx, agentID, conversationID, instance string, now time.Time) error {
	hd, err := tx.Hold(ctx, agentID, conversationID)
	switch {
	case errors.Is(err, ErrNoRows):
	case err != nil:
		return err
	case hd.Instance != instance && hd.live(now):
		return nil
	}
	return tx.SetHold(ctx, agentID, conversationID, instance, now)
}

// Addressing is how a message stands for one named session (§5, §6).
type Addressing struct {
	ForYou  bool   // this session should answer it
	FromYou bool   // this session's own words coming back
	HeldBy  string // the live session holding the conversation, when another
}

// address tells how m stands for the agent's session instance, given the
// agent's live holders.
func address(m *Message, agentID, instance string, holders map[string]string) Addressing {
	a := Addressing{FromYou: m.SenderID == agentID && m.SenderInstance == instance}
	holder := holders[m.ConversationID]
	if holder != instance {
		a.HeldBy = holder
	}
	switch {
	case a.FromYou:
	case m.ToInstance != "":
		a.ForYou = m.ToInstance == instance
	case m.SenderID == agentID:
		// A sibling session's words: that session holds the conversation
		// because it spoke, yet its words are for this one to hear.
		a.ForYou = true
	default:
		a.ForYou = a.HeldBy == ""
	}
	return a
}

// Claim is a session's hold on a conversation.
type Claim struct {
	ConversationID string
	Instance       string
	Previous       string // the session that held it before a takeover
}

// ClaimConversation makes the named session the holder of a conversation
// (§5). While another session of the agent that was seen within HoldLapse
// holds it, the claim is refused with status held_by_other unless takeover.
// Claims are decided one at a time inside the store's transaction, so of two
// sessions claiming at once exactly one wins.
func (h *Hub) ClaimConversation(ctx context.Context, c *Caller, conversationID, instance string, takeover bool) (*Claim, error) {
	name, err := h.seeInstance(ctx, c, instance)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, invalid("", "instance is required: name the session that takes the {conversation}")
	}
	claim := &Claim{ConversationID: conversationID, Instance: name}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if _, err := lockedAccess(ctx, tx, c.Agent.ID, conversationID); err != nil {
			return nil, err
		}
		holders, err := h.liveHolders(ctx, tx, c.Agent.ID)
		if err != nil {
			return nil, err
		}
		held := holders[conversationID]
		if held != "" && held != name {
			if !takeover {
				return nil, &Refusal{Status: StatusHeldByOther,
					Reason:  fmt.Sprintf("held_by_other: your session %s holds this {conversation} and answers it; leave it to that session, or pass takeover:true to take it over", held),
					Details: map[string]any{"held_by": held}}
			}
			claim.Previous = held
		}
		now := h.now()
		var events []*Event
		if held != name {
			// The owner sees which session took it (§11 Bridge).
			data, _ := json.Marshal(map[string]string{"agent": c.Agent.Handle(), "instance": name, "previous": claim.Previous})
			events = append(events, &Event{RecipientID: c.Agent.OwnerID, Type: EventClaimed, ConversationID: conversationID, Data: data, CreatedAt: now})
		}
		return events, tx.SetHold(ctx, c.Agent.ID, conversationID, name, now)
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return claim, nil
}

// MarkUnread moves a place back so that seq and what follows read as new
// (§5): the named session's place, or the agent's with no instance, and
// the messages from seq on that wait for the agent show already_read
// false again (InboxItem.AlreadyRead), agreeing with the unread count past
// the place. (A body read is the agent's, not one session's: any session
// marking a message unread makes it new for all of them.) It returns the
// place after the move (a place never moves forward here).
func (h *Hub) MarkUnread(ctx context.Context, c *Caller, conversationID string, seq int64, instance string) (int64, error) {
	name, err := h.seeInstance(ctx, c, instance)
	if err != nil {
		return 0, err
	}
	var place int64
	err = h.store.Update(ctx, func(tx Tx) error {
		v, err := lockedAccess(ctx, tx, c.Agent.ID, conversationID)
		if err != nil {
			return err
		}
		if seq < 1 || seq > v.Conversation.LastSeq {
			return invalid("", "seq %d is not a message of this {conversation} (its seqs run 1 to %d)", seq, v.Conversation.LastSeq)
		}
		if err := tx.MoveRead(ctx, v.Conversation.ID, c.Agent.ID, name, seq-1, false, h.now()); err != nil {
			return err
		}
		if err := tx.UnmarkFetched(ctx, c.Agent.ID, v.Conversation.ID, seq); err != nil {
			return err
		}
		reads, err := tx.Reads(ctx, v.Conversation.ID)
		for _, r := range reads {
			if r.PrincipalID == c.Agent.ID && r.Instance == name {
				place = r.LastReadSeq
			}
		}
		return err
	})
	if err != nil {
		return 0, asOutcome(err)
	}
	return place, nil
}

// sessionInbox adds, for a named session, its sibling sessions' words in
// shared conversations past its place, and marks who holds each row's
// conversation; the rows are merged oldest first and cut to limit.
func (h *Hub) sessionInbox(ctx context.Context, c *Caller, instance string, r *InboxResult, limit int) error {
	sib, n, err := h.store.SiblingWords(ctx, c.Agent.ID, instance, limit)
	if err != nil || n == 0 {
		return err
	}
	holders, err := h.liveHolders(ctx, h.store, c.Agent.ID)
	if err != nil {
		return err
	}
	for _, m := range sib {
		r.Items = append(r.Items, InboxItem{Message: m, Sibling: true, HeldBy: holders[m.ConversationID]})
	}
	slices.SortStableFunc(r.Items, func(a, b InboxItem) int { return a.Message.CreatedAt.Compare(b.Message.CreatedAt) })
	if len(r.Items) > limit {
		r.Items = r.Items[:limit]
	}
	r.Total += n
	r.More = r.Total - len(r.Items)
	return nil
}

// SessionReads are the queries of sessions (Reader embeds them).
type SessionReads interface {
	Instances(ctx context.Context, agentID string) ([]Instance, error)
	// Holds lists the agent's holds, each with its session's last-seen time.
	Holds(ctx context.Context, agentID string) ([]Hold, error)
	// Hold is the agent's hold on one conversation, with its session's
	// last-seen time (ErrNoRows: none of its sessions holds it).
	Hold(ctx context.Context, agentID, conversationID string) (Hold, error)
}

// SessionWrites are the writes of sessions (Tx embeds them).
type SessionWrites interface {
	// UpsertInstance records a session name's note (kept when note is "") and
	// last-seen time.
	UpsertInstance(ctx context.Context, agentID, name, note string, at time.Time) error
	DeleteInstance(ctx context.Context, agentID, name string) error
	// SetHold makes the agent's session the holder of a conversation.
	SetHold(ctx context.Context, agentID, conversationID, instance string, at time.Time) error
	// MoveRead sets a place to max(current, seq) when forward; otherwise to
	// min(current, seq), leaving a place that does not exist yet alone.
	MoveRead(ctx context.Context, conversationID, principalID, instance string, seq int64, forward bool, at time.Time) error
}
