package hub

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
)

// Questions (§9): an agent asks its owner, the owner answers, and the
// answer waits in the asking session's inbox until acknowledged.

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
	q := &Question{ID: NewID(IDQuestion, now), AgentID: c.Agent.ID, AgentHandle: c.Agent.Handle(), OwnerID: c.Agent.OwnerID,
		Instance: instance, ConversationID: conversationID, Question: question, Options: opts, CreatedAt: now}
	data, _ := json.Marshal(map[string]any{"question_id": q.ID, "agent": q.AgentHandle, "instance": q.Instance, "question": q.Question, "options": q.Options})
	asked := []*Event{{RecipientID: q.OwnerID, Type: EventQuestionAsked, ConversationID: conversationID, Data: data, CreatedAt: now}}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return asked, tx.InsertQuestion(ctx, q) }); err != nil {
		return nil, err
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
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		q, err = tx.Question(ctx, questionID)
		if errors.Is(err, ErrNoRows) || (err == nil && q.OwnerID != u.ID) {
			return nil, notFound("no question %q waits for %s; list them with approvals", echo(questionID), u.Handle)
		}
		if err != nil {
			return nil, err
		}
		if !q.AnsweredAt.IsZero() {
			return nil, &Error{Kind: KindConflict, Msg: "this question was already answered: " + q.Answer}
		}
		if len(q.Options) > 0 {
			i := slices.IndexFunc(q.Options, func(o string) bool { return strings.EqualFold(o, answer) })
			if i < 0 {
				return nil, invalid("", "answer with one of the options: %s", strings.Join(q.Options, " | "))
			}
			answer = q.Options[i]
		}
		now := h.now()
		q.Answer, q.AnsweredAt = answer, now
		if err := tx.AnswerQuestion(ctx, q.ID, answer, now); err != nil {
			return nil, err
		}
		data, _ := json.Marshal(map[string]any{"question_id": q.ID, "question": q.Question, "answer": answer, "instance": q.Instance})
		return []*Event{{RecipientID: q.AgentID, Type: EventOwnerAnswer, ConversationID: q.ConversationID, Data: data, CreatedAt: now},
			decided(u, ApprovalQuestion, q.ID, "answered", now)}, nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// acknowledgeAnswer takes an owner's answer out of the agent's inbox.
func (h *Hub) acknowledgeAnswer(ctx context.Context, c *Caller, questionID string) (*Delivery, error) {
	q, err := h.store.Question(ctx, questionID)
	if errors.Is(err, ErrNoRows) || (err == nil && (q.AgentID != c.Agent.ID || q.AnsweredAt.IsZero())) {
		return nil, notFound("no answer to question %q waits for you", echo(questionID))
	}
	if err != nil {
		return nil, AsError(err)
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.AckAnswer(ctx, q.ID, h.now()) }); err != nil {
		return nil, AsError(err)
	}
	return &Delivery{MessageID: q.ID, AgentID: c.Agent.ID, State: DeliveryDone, AckedAt: h.now()}, nil
}

// QuestionReads are the queries of questions (Reader embeds them).
type QuestionReads interface {
	Question(ctx context.Context, id string) (*Question, error)
	// PendingQuestions lists the owner's unanswered questions, oldest first.
	PendingQuestions(ctx context.Context, ownerID string) ([]*Question, error)
	// Answers lists the agent's answered, unacknowledged questions, oldest
	// first; only those asked by the session when instance is not "".
	Answers(ctx context.Context, agentID, instance string) ([]*Question, error)
}

// QuestionWrites are the writes of questions (Tx embeds them).
type QuestionWrites interface {
	InsertQuestion(ctx context.Context, q *Question) error
	AnswerQuestion(ctx context.Context, id, answer string, at time.Time) error
	AckAnswer(ctx context.Context, id string, at time.Time) error
}
