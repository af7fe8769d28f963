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
	missing := notFound("no {conversation} %q is open to %s", echo(conversationID), u.Handle)
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
		own = own || (p.Kind == PrincipalAgent && p.OwnerID == u.ID && !p.Archived) // an archived agent has left (§1)
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
	return h.postAsPerson(ctx, u, SendInput{ConversationID: conversationID, Body: body, Format: format})
}

// postAsPerson stores and delivers a person's text message: its body,
// format and mentions.
func (h *Hub) postAsPerson(ctx context.Context, u *User, in SendInput) (*SendResult, error) {
	in = SendInput{ConversationID: in.ConversationID, Body: in.Body, Format: in.Format, Mentions: in.Mentions, a2aAgent: in.a2aAgent}
	if err := checkSend(&in, true); err != nil {
		return nil, err
	}
	var res *SendResult
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.LockConversation(ctx, in.ConversationID); err != nil {
			return nil, err
		}
		v, participant, err := personAccess(ctx, tx, u, in.ConversationID)
		if err != nil {
			return nil, err
		}
		mentions, err := checkMentions(v.Participants, in.Mentions)
		if err != nil {
			return nil, err
		}
		if mentions, err = roomMentions(v, u.ID, MessageText, in.Body, mentions); err != nil {
			return nil, err
		}
		now := h.now()
		m := &Message{ID: NewID(IDMessage, now), ConversationID: v.Conversation.ID, Status: MessageSent,
			SenderID: u.ID, SenderKind: PrincipalUser, SenderHandle: u.Handle, Body: in.Body, Format: in.Format, Kind: MessageText,
			Mentions: mentions, Author: AuthorHuman, Authority: AuthorityHuman, OwnerID: u.ID, OwnerHandle: u.Handle, CreatedAt: now}
		if !participant {
			m.Authority = AuthorityInterject
		}
		resumed, err := personTookPart(ctx, tx, v, now)
		if err != nil {
			return nil, err
		}
		events, err := deliverNew(ctx, tx, v, m, now, resumed)
		if err != nil {
			return nil, err
		}
		res = &SendResult{Message: m, Recipients: recipients(v, m), to: recipientIDs(v, m)}
		return events, noteA2A(ctx, tx, in.a2aAgent, m)
	})
	if err != nil {
		return nil, err
	}
	res.Listening = h.listeningNow(ctx, res.to)
	return res, nil
}

// PersonMessages reads a conversation as a person (§11.3): one they take
// part in, or one an agent of theirs does. Reading moves the person's own
// place where they take part, and no agent's.
func (h *Hub) PersonMessages(ctx context.Context, u *User, conversationID string, afterSeq int64, limit int) (*ConversationView, *ReadResult, error) {
	limit, err := checkPage(afterSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	v, participant, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, nil, asOutcome(err)
	}
	res, err := readPage(ctx, h.store, v.Conversation.ID, afterSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	if err := h.personRead(ctx, u, v, participant, res); err != nil {
		return nil, nil, err
	}
	return v, res, nil
}

// personRead records that a person read a page of a conversation: their
// place moves forward to its last message when they take part (an owner
// reading an agent's conversation has no place there, and moves no
// agent's), and the page gets everyone's places, and the agent's own
// words of the messages the person edited (withOriginals).
func (h *Hub) personRead(ctx context.Context, u *User, v *ConversationView, participant bool, res *ReadResult) error {
	if err := withOriginals(ctx, h.store, u, res.Messages); err != nil {
		return err
	}
	if n := len(res.Messages); participant && n > 0 {
		seq, now := res.Messages[n-1].Seq, h.now()
		if err := h.update(ctx, func(tx Tx) ([]*Event, error) {
			return nil, tx.MoveRead(ctx, v.Conversation.ID, u.ID, "", seq, true, now)
		}); err != nil {
			return err
		}
	}
	var err error
	if res.Reads, err = h.store.Reads(ctx, v.Conversation.ID); err != nil {
		return AsError(err)
	}
	return nil
}

// PersonRecent is the last page of a conversation as a person reads it
// (the dashboard's view, REST's conversation): PersonMessagesBefore of the
// latest messages.
func (h *Hub) PersonRecent(ctx context.Context, u *User, conversationID string, limit int) (*ConversationView, *ReadResult, error) {
	return h.PersonMessagesBefore(ctx, u, conversationID, 0, limit)
}

// PersonMessagesBefore is the page of a conversation that ends just before
// beforeSeq (0: the latest page) as a person reads it (§11.3): at most
// limit (MessagesPage) of the messages before it, fewer when their words
// pass the page's size, oldest first, with HasOlder when older ones come
// before them (read them before BeforeSeq) and how far everyone has read.
// Reading moves the person's own place where they take part, as
// PersonMessages does.
func (h *Hub) PersonMessagesBefore(ctx context.Context, u *User, conversationID string, beforeSeq int64, limit int) (*ConversationView, *ReadResult, error) {
	limit, err := checkPageBefore(beforeSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	v, participant, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, nil, asOutcome(err)
	}
	res, err := pageBefore(ctx, h.store, v.Conversation, beforeSeq, limit)
	if err != nil {
		return nil, nil, err
	}
	if err := h.personRead(ctx, u, v, participant, res); err != nil {
		return nil, nil, err
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

// PersonPage is the page of a person's conversations (§11.3).
var PersonPage = Page{Default: 50, Max: 100}

// PersonConversations lists the open conversations the person or any of
// their agents take part in, most recently active first (§11), a page at a
// time: after is a previous page's Next ("" for the first). Unread counts
// past the person's own place where they take part (0 where they do not).
func (h *Hub) PersonConversations(ctx context.Context, u *User, after string, limit int) (*ConversationPage, error) {
	limit, err := PersonPage.check(limit)
	if err != nil {
		return nil, err
	}
	before, beforeID, err := pageStart(after)
	if err != nil {
		return nil, err
	}
	convs, err := h.store.OwnersConversations(ctx, u.ID, before, beforeID, limit+1)
	if err != nil {
		return nil, AsError(err)
	}
	return h.conversationPage(ctx, convs, limit, u.ID)
}

// ConfirmClose is a person closing a conversation (§4): the owner of the
// agent that made it (confirming its request_close, or without one), the
// person who made it, or, for a project thread, the project's owner.
func (h *Hub) ConfirmClose(ctx context.Context, u *User, conversationID string) (*Conversation, error) {
	v, _, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, asOutcome(err)
	}
	c := v.Conversation
	if c.Kind == KindDirect {
		return nil, errDirectNotClosed
	}
	may := c.CreatorID == u.ID
	if creator, ok := participant(v.Participants, c.CreatorID); ok && creator.OwnerID == u.ID {
		may = true
	}
	if c.Kind == KindThread && !may {
		p, err := h.store.Project(ctx, c.ProjectID)
		if err != nil {
			return nil, AsError(err)
		}
		may = p.OwnerID == u.ID
	}
	if !may {
		return nil, &Error{Kind: KindForbidden, Msg: "a {conversation} is closed by the owner of the agent that started it (or of its project); ask them"}
	}
	return h.CloseConversation(ctx, conversationID)
}
