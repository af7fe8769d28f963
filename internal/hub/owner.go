package hub

import (
	"context"
	"errors"
)

// A person in their agents' conversations (§4, §7): reading, writing, and
// pressing Resume. Faces authenticate the person; the hub checks that the
// person takes part, or owns an agent that does.

// personAccess loads a conversation a person may act in: one they take part
// in, or one where an agent of theirs does (§4 human_interject). Closed and
// other conversations are not_found. participant reports which.
func personAccess(ctx context.Context, r Reader, u *User, conversationID string) (v *ConversationView, participant bool, err error) {
	missing := notFound("no conversation %q is open to %s", cleanText(conversationID), u.Handle)
	c, err := r.Conversation(ctx, conversationID)
	if errors.Is(err, ErrNoRows) || (err == nil && c.Status == StatusClosed) {
		return nil, false, missing
	}
	if err != nil {
		return nil, false, err
	}
	ps, err := r.Participants(ctx, c.ID)
	if err != nil {
		return nil, false, err
	}
	own := false
	for _, p := range ps {
		if p.PrincipalID == u.ID {
			participant = true
		}
		own = own || (p.Kind == PrincipalAgent && p.OwnerID == u.ID)
	}
	if !participant && !own {
		return nil, false, missing
	}
	return &ConversationView{Conversation: c, Participants: ps}, participant, nil
}

// PostAsPerson writes a person's message into a conversation (§4): authority
// human when they take part in it, human_interject when they write into a
// conversation of their agent's. A person is never slowed by brakes, and
// writing counts as taking part.
func (h *Hub) PostAsPerson(ctx context.Context, u *User, conversationID, body, format string) (*SendResult, error) {
	in := SendInput{ConversationID: conversationID, Body: body, Format: format}
	if err := checkSend(&in, true); err != nil {
		return nil, err
	}
	var res *SendResult
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return nil, err
		}
		v, participant, err := personAccess(ctx, tx, u, conversationID)
		if err != nil {
			return nil, err
		}
		now := h.now()
		m := &Message{ID: NewID(IDMessage, now), ConversationID: v.Conversation.ID, Status: MessageSent,
			SenderID: u.ID, SenderKind: PrincipalUser, SenderHandle: u.Handle, Body: in.Body, Format: in.Format, Kind: MessageText,
			Author: AuthorHuman, Authority: AuthorityHuman, OwnerID: u.ID, OwnerHandle: u.Handle, CreatedAt: now}
		if !participant {
			m.Authority = AuthorityInterject
		}
		if m.Seq, err = tx.NextSeq(ctx, v.Conversation.ID, now); err != nil {
			return nil, err
		}
		if err := tx.InsertMessage(ctx, m); err != nil {
			return nil, err
		}
		delivered, err := deliver(ctx, tx, v, m, now)
		if err != nil {
			return nil, err
		}
		resumed, err := personTookPart(ctx, tx, v, now)
		res = &SendResult{Message: m, Recipients: countRecipients(v.Participants, u.ID)}
		return append(delivered, resumed...), err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// PersonMessages reads a conversation as a person (§11.3): one they take
// part in, or one an agent of theirs does. Reading as a person moves no
// agent's place.
func (h *Hub) PersonMessages(ctx context.Context, u *User, conversationID string, afterSeq int64, limit int) (*ConversationView, *ReadResult, error) {
	limit, err := checkPage(afterSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	v, _, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, nil, asOutcome(err)
	}
	res, err := readPage(ctx, h.store, v.Conversation.ID, afterSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	if res.Reads, err = h.store.Reads(ctx, v.Conversation.ID); err != nil {
		return nil, nil, AsError(err)
	}
	return v, res, nil
}

// Resume is a person pressing Resume on a conversation (§7): the pause is
// lifted and the brakes' counts start again.
func (h *Hub) Resume(ctx context.Context, u *User, conversationID string) (*Conversation, error) {
	var conv *Conversation
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return nil, err
		}
		v, _, err := personAccess(ctx, tx, u, conversationID)
		if err != nil {
			return nil, err
		}
		conv = v.Conversation
		return personTookPart(ctx, tx, v, h.now())
	})
	if err != nil {
		return nil, err
	}
	return conv, nil
}
