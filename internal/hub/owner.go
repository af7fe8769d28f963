package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// The owner's side (§7, §9): what a person does about their agents — set a
// mode, write into a conversation, resume a paused one, decide held
// messages, answer questions. Faces authenticate the person; the hub checks
// that the person owns what they act on.

// SetAgentMode sets an agent's mode (§1): active, review or listen.
func (h *Hub) SetAgentMode(ctx context.Context, handle, mode string) (*Agent, error) {
	if !slices.Contains([]string{ModeActive, ModeReview, ModeListen}, mode) {
		return nil, invalid("", "mode must be active, review or listen (got %q)", cleanText(mode))
	}
	a, err := h.Agent(ctx, handle)
	if err != nil {
		return nil, err
	}
	a.Mode = mode
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetAgentMode(ctx, a.ID, mode) }); err != nil {
		return nil, AsError(err)
	}
	return a, nil
}

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
	var wake []*Event
	err := h.update(ctx, &wake, func(tx Tx) error {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return err
		}
		v, participant, err := personAccess(ctx, tx, u, conversationID)
		if err != nil {
			return err
		}
		now := h.now()
		m := &Message{ID: NewID("msg", now), ConversationID: v.Conversation.ID, Status: MessageSent,
			SenderID: u.ID, SenderKind: PrincipalUser, SenderHandle: u.Handle, Body: in.Body, Format: in.Format, Kind: MessageText,
			Author: AuthorHuman, Authority: AuthorityHuman, OwnerID: u.ID, OwnerHandle: u.Handle, CreatedAt: now}
		if !participant {
			m.Authority = AuthorityInterject
		}
		if m.Seq, err = tx.NextSeq(ctx, v.Conversation.ID, now); err != nil {
			return err
		}
		if err := tx.InsertMessage(ctx, m); err != nil {
			return err
		}
		if wake, err = deliver(ctx, tx, v, m, now); err != nil {
			return err
		}
		resumed, err := personTookPart(ctx, tx, v, now)
		wake = append(wake, resumed...)
		res = &SendResult{Message: m, Recipients: countRecipients(v.Participants, u.ID)}
		return err
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
	limit, err := checkLimit(limit, 100, 100)
	if err != nil {
		return nil, nil, err
	}
	v, _, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, nil, asOutcome(err)
	}
	msgs, err := h.store.Messages(ctx, v.Conversation.ID, afterSeq, limit+1)
	if err != nil {
		return nil, nil, AsError(err)
	}
	res := &ReadResult{NextAfterSeq: afterSeq, Messages: msgs}
	if len(msgs) > limit {
		res.Messages, res.HasMore = msgs[:limit], true
	}
	if n := len(res.Messages); n > 0 {
		res.NextAfterSeq = res.Messages[n-1].Seq
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
	var wake []*Event
	err := h.update(ctx, &wake, func(tx Tx) error {
		if err := tx.LockConversation(ctx, conversationID); err != nil {
			return err
		}
		v, _, err := personAccess(ctx, tx, u, conversationID)
		if err != nil {
			return err
		}
		conv = v.Conversation
		wake, err = personTookPart(ctx, tx, v, h.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return conv, nil
}

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

// DecideHeld approves (optionally edited) or rejects a message held for the
// owner's review. Approval assigns the next seq at that moment and delivers
// it, and counts as the owner taking part; the sender hears pending.decided
// either way.
func (h *Hub) DecideHeld(ctx context.Context, u *User, messageID string, d Decision) (*Message, error) {
	var m *Message
	var wake []*Event
	err := h.update(ctx, &wake, func(tx Tx) error {
		var err error
		m, err = tx.Message(ctx, messageID)
		if errors.Is(err, ErrNoRows) || (err == nil && (m.OwnerID != u.ID || m.DecidedBy == "" && m.Status != MessageHeld)) {
			return notFound("no message %q is held for %s's review; list them with: palaver approvals list --user %s", cleanText(messageID), u.Handle, u.Handle)
		}
		if err != nil {
			return err
		}
		if m.Status != MessageHeld {
			// Decided already: the same decision again is answered the same.
			if (m.Status == MessageSent) == d.Approve && (d.Body == "" || d.Body == m.Body) {
				return nil
			}
			return &Error{Kind: KindConflict, Msg: "this message was already " + map[bool]string{true: "approved", false: "rejected"}[m.Status == MessageSent]}
		}
		now := h.now()
		m.DecidedBy, m.DecidedAt = u.ID, now
		decision := "rejected"
		var v *ConversationView
		if d.Approve {
			if err := tx.LockConversation(ctx, m.ConversationID); err != nil {
				return err
			}
			if v, _, err = personAccess(ctx, tx, u, m.ConversationID); err != nil {
				return invalid("", "the conversation of this message is closed; reject it instead")
			}
			decision = "approved"
			m.Authority = AuthorityApproved
			if d.Body != "" && d.Body != m.Body {
				body, err := checkBody(d.Body)
				if err != nil {
					return err
				}
				// The agent's summary described the agent's words; the
				// reader sees a preview of the owner's instead.
				m.OriginalBody, m.Body, m.Summary = m.Body, body, ""
				m.Authority, decision = AuthorityEdited, "edited"
			}
			m.Status = MessageSent
			if m.Seq, err = tx.NextSeq(ctx, m.ConversationID, now); err != nil {
				return err
			}
		} else {
			m.Status = MessageRejected
		}
		if err := tx.DecideMessage(ctx, m); err != nil {
			return err
		}
		if d.Approve {
			if wake, err = deliver(ctx, tx, v, m, now); err != nil {
				return err
			}
			resumed, err := personTookPart(ctx, tx, v, now)
			if err != nil {
				return err
			}
			wake = append(wake, resumed...)
		}
		data, _ := json.Marshal(map[string]any{"message_id": m.ID, "decision": decision, "seq": m.Seq})
		ev := &Event{RecipientID: m.SenderID, Type: EventPendingDecided, ConversationID: m.ConversationID, MessageID: m.ID, Data: data, CreatedAt: now}
		wake = append(wake, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Approval is one decision waiting for an owner (§9).
type Approval struct {
	Kind     string // "held_message", "question", "grant_request" or "inbound_ask"
	ID       string
	Agent    string // the agent's handle
	At       time.Time
	Message  *Message      // for held messages
	Question *Question     // for questions
	Grant    *GrantRequest // for grant requests
	Contact  string        // for grant requests: the contact's handle
	Ask      *InboundAsk   // for inbound asks
}

// Approvals lists every decision waiting for the owner, oldest first, with
// its context.
func (h *Hub) Approvals(ctx context.Context, u *User) ([]Approval, error) {
	held, err := h.store.HeldMessages(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	qs, err := h.store.PendingQuestions(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	grants, err := h.store.GrantRequests(ctx, u.ID, "")
	if err != nil {
		return nil, AsError(err)
	}
	asks, err := h.store.PendingInboundAsks(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []Approval
	for _, r := range grants {
		a, err := h.store.AgentByID(ctx, r.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		contact, err := h.store.UserByID(ctx, r.ContactID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: "grant_request", ID: r.ID, Agent: a.Handle(), At: r.CreatedAt, Grant: r, Contact: contact.Handle})
	}
	for _, ask := range asks {
		a, err := h.store.AgentByID(ctx, ask.AgentID)
		if err != nil {
			return nil, AsError(err)
		}
		out = append(out, Approval{Kind: "inbound_ask", ID: ask.ID, Agent: a.Handle(), At: ask.CreatedAt, Ask: ask})
	}
	for _, m := range held {
		out = append(out, Approval{Kind: "held_message", ID: m.ID, Agent: m.SenderHandle, At: m.CreatedAt, Message: m})
	}
	for _, q := range qs {
		out = append(out, Approval{Kind: "question", ID: q.ID, Agent: q.AgentHandle, At: q.CreatedAt, Question: q})
	}
	slices.SortStableFunc(out, func(a, b Approval) int { return a.At.Compare(b.At) })
	return out, nil
}

// Limits of questions (§9).
const (
	MaxQuestion = 2000
	MaxOptions  = 10
	MaxOption   = 200
)

// AskOwner puts a question to the caller's owner (§9). It returns the
// pending question; the answer comes back as an owner.answer event and under
// answers in check_inbox until acknowledged.
func (h *Hub) AskOwner(ctx context.Context, c *Caller, question, instance, conversationID string, options []string) (*Question, error) {
	question, err := checkText("question", strings.TrimSpace(question), 1, MaxQuestion)
	if err != nil {
		return nil, err
	}
	if len(options) > MaxOptions {
		return nil, invalid("", "options has %d entries; the limit is %d", len(options), MaxOptions)
	}
	var opts []string
	for _, o := range options {
		o, err := checkText("each option", strings.TrimSpace(o), 1, MaxOption)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(opts, func(x string) bool { return strings.EqualFold(x, o) }) {
			return nil, invalid("", "options repeat %q; give each choice once", o)
		}
		opts = append(opts, o)
	}
	if instance, err = h.seeInstance(ctx, c, instance); err != nil {
		return nil, err
	}
	if conversationID != "" {
		if _, err := access(ctx, h.store, c.Agent.ID, conversationID); err != nil {
			return nil, err
		}
	}
	now := h.now()
	q := &Question{ID: NewID("q", now), AgentID: c.Agent.ID, AgentHandle: c.Agent.Handle(), OwnerID: c.Agent.OwnerID,
		Instance: instance, ConversationID: conversationID, Question: question, Options: opts, CreatedAt: now}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.InsertQuestion(ctx, q) }); err != nil {
		return nil, AsError(err)
	}
	return q, nil
}

// AnswerQuestion is the owner's answer (§9); with options it must be one of
// them (matched without regard to case). The asking agent hears owner.answer.
func (h *Hub) AnswerQuestion(ctx context.Context, u *User, questionID, answer string) (*Question, error) {
	answer, err := checkText("answer", strings.TrimSpace(answer), 1, MaxQuestion)
	if err != nil {
		return nil, err
	}
	var q *Question
	var wake []*Event
	err = h.update(ctx, &wake, func(tx Tx) error {
		var err error
		q, err = tx.Question(ctx, questionID)
		if errors.Is(err, ErrNoRows) || (err == nil && q.OwnerID != u.ID) {
			return notFound("no question %q waits for %s; list them with approvals", cleanText(questionID), u.Handle)
		}
		if err != nil {
			return err
		}
		if !q.AnsweredAt.IsZero() {
			return &Error{Kind: KindConflict, Msg: "this question was already answered: " + q.Answer}
		}
		if len(q.Options) > 0 {
			i := slices.IndexFunc(q.Options, func(o string) bool { return strings.EqualFold(o, answer) })
			if i < 0 {
				return invalid("", "answer with one of the options: %s", strings.Join(q.Options, " | "))
			}
			answer = q.Options[i]
		}
		now := h.now()
		q.Answer, q.AnsweredAt = answer, now
		if err := tx.AnswerQuestion(ctx, q.ID, answer, now); err != nil {
			return err
		}
		data, _ := json.Marshal(map[string]any{"question_id": q.ID, "question": q.Question, "answer": answer, "instance": q.Instance})
		wake = []*Event{{RecipientID: q.AgentID, Type: EventOwnerAnswer, ConversationID: q.ConversationID, Data: data, CreatedAt: now}}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}
