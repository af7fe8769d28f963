package hub

import (
	"context"
	"encoding/json"
	"errors"
)

// Review (§7): an owner decides each message held from an agent in review
// mode, letting it go as written, edited first, or not at all.

// Decision is an owner's answer to a held message (§7 review).
type Decision struct {
	Approve bool
	// Body replaces the agent's words before approval (owner_edited); the
	// original is kept for audit. "" approves them unchanged.
	Body string
}

// Authorities of messages an owner let go (§4).
const (
	AuthorityInterject = "human_interject"
	AuthorityApproved  = "owner_approved"
	AuthorityEdited    = "owner_edited"
)

// The agent's own words of an edited message are kept for audit (§4
// owner_edited) and shown to one person only: the owner who edited them —
// the owner of the sending agent — in every view of their agents'
// conversations. Everyone else (other participants, other owners, every
// agent, every tool result) sees the words that went out and the authority
// owner_edited. The store hands the words over only when asked
// (OriginalBodies); withOriginals is the one place that asks.

// seesOriginal reports whether u may see the agent's own words of m.
func seesOriginal(u *User, m *Message) bool {
	return u != nil && m.Authority == AuthorityEdited && m.SenderKind == PrincipalAgent && m.OwnerID == u.ID
}

// withOriginals fills OriginalBody in each of msgs that u may see the
// agent's own words of (seesOriginal), as the messages are handed to u.
func withOriginals(ctx context.Context, r Reader, u *User, msgs []*Message) error {
	var ids []string
	for _, m := range msgs {
		if seesOriginal(u, m) {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	originals, err := r.OriginalBodies(ctx, ids)
	if err != nil {
		return AsError(err)
	}
	for _, m := range msgs {
		if o, ok := originals[m.ID]; ok && seesOriginal(u, m) {
			m.OriginalBody = o
		}
	}
	return nil
}

// DecideHeld approves (optionally edited) or rejects a message held for the
// owner's review. Approval assigns the next seq at that moment and delivers
// it, and counts as the owner taking part; the sender hears pending.decided
// either way.
func (h *Hub) DecideHeld(ctx context.Context, u *User, messageID string, d Decision) (*Message, error) {
	var m *Message
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		m, err = tx.Message(ctx, messageID)
		if errors.Is(err, ErrNoRows) || (err == nil && (m.OwnerID != u.ID || m.DecidedBy == "" && m.Status != MessageHeld)) {
			return nil, hinted(KindNotFound, "list them", Action{ActionListApprovals, map[string]string{"user": u.Handle}}, "no message %q is held for %s's review", echo(messageID), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		if m.Status != MessageHeld {
			// Decided already: the same decision again is answered the same.
			if (m.Status == MessageSent) == d.Approve && (d.Body == "" || d.Body == m.Body) {
				return nil, nil
			}
			return nil, &Error{Kind: KindConflict, Msg: "this message was already " + map[bool]string{true: "approved", false: "rejected"}[m.Status == MessageSent]}
		}
		now := h.now()
		m.DecidedBy, m.DecidedAt = u.ID, now
		decision := "rejected"
		var v *ConversationView
		if d.Approve {
			if err := tx.LockConversation(ctx, m.ConversationID); err != nil {
				return nil, err
			}
			if v, _, err = personAccess(ctx, tx, u, m.ConversationID); err != nil {
				if AsError(err).Kind == KindNotFound {
					return nil, invalid("", "the {conversation} of this message is closed or no longer open to you; reject it instead")
				}
				return nil, err
			}
			// Approving lets the agent's send go out now: it must still
			// be one the agent may make (§7, §8).
			if err := senderMaySend(ctx, tx, v, m); err != nil {
				return nil, err
			}
			decision = "approved"
			m.Authority = AuthorityApproved
			if d.Body != "" && d.Body != m.Body {
				body, err := checkBody(d.Body)
				if err != nil {
					return nil, err
				}
				// The agent's summary described the agent's words; the
				// reader sees a preview of the owner's instead.
				m.OriginalBody, m.Body, m.Summary = m.Body, body, ""
				m.Authority, decision = AuthorityEdited, "edited"
			}
			m.Status = MessageSent
			if m.Seq, err = tx.NextSeq(ctx, m.ConversationID, now); err != nil {
				return nil, err
			}
		} else {
			m.Status = MessageRejected
		}
		if err := tx.DecideMessage(ctx, m); err != nil {
			return nil, err
		}
		var events []*Event
		if d.Approve {
			if events, err = deliver(ctx, tx, v, m, now); err != nil {
				return nil, err
			}
			resumed, err := personTookPart(ctx, tx, v, now)
			if err != nil {
				return nil, err
			}
			events = append(events, resumed...)
		}
		if !d.Approve && m.SenderKind == PrincipalAgent {
			// An A2A caller waiting on this agent's reply hears that
			// none comes (§18); an approved one reaches it as message.new.
			callers, err := tx.A2ACallers(ctx, m.ConversationID, m.SenderID)
			if err != nil {
				return nil, err
			}
			for _, id := range callers {
				events = append(events, &Event{RecipientID: id, Type: EventTaskChanged, ConversationID: m.ConversationID, CreatedAt: now})
			}
		}
		data, _ := json.Marshal(map[string]any{"message_id": m.ID, "decision": decision, "seq": m.Seq})
		ev := &Event{RecipientID: m.SenderID, Type: EventPendingDecided, ConversationID: m.ConversationID, MessageID: m.ID, Data: data, CreatedAt: now}
		return append(events, ev, decided(u, ApprovalHeldMessage, m.ID, decision, now)), nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// senderMaySend refuses to let a held message go when its agent could not
// send it now: it left the conversation, its project access is no longer
// speak, or whom it would reach is no longer within its reach.
func senderMaySend(ctx context.Context, tx Tx, v *ConversationView, m *Message) error {
	refuse := func(why string) error {
		return invalid("sender_may_not_send", "%s could not send this now (%s); reject it instead", m.SenderHandle, why)
	}
	if _, ok := participant(v.Participants, m.SenderID); !ok {
		return refuse("it is no longer in the conversation")
	}
	a, err := tx.AgentByID(ctx, m.SenderID)
	if err != nil {
		return err
	}
	if v.Conversation.Kind == KindThread {
		_, err = threadSend(ctx, tx, v.Conversation, a)
	} else {
		err = stillReachable(ctx, tx, a, v)
	}
	var r *Refusal
	if errors.As(err, &r) {
		return refuse(r.Reason)
	}
	return err
}
