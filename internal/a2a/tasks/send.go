package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/palaverhq/palaver/internal/hub"
)

// Send is an A2A message/send to the exposed agent owner/slug (§18): it
// opens or reuses the direct conversation between the caller and the
// agent — as open_conversation does, with its consent and refusals (§3) —
// and sends the text there as send_message does (brakes, review,
// provenance, client_msg_id; §4, §7), or as a person writes. The task is
// the stored message. A contextId other than that conversation, or a
// taskId that is not the caller's there, is invalid.
func (x *Tasks) Send(ctx context.Context, c Caller, owner, slug string, in Message) (*Task, error) {
	ea, err := x.ExposedAgent(ctx, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(hub.ScopeWrite); err != nil {
		return nil, err
	}
	if c.Agent != nil && strings.TrimSpace(in.Summary) == "" && utf8.RuneCountInString(in.Body) > hub.SummaryNeeded {
		return nil, hub.Invalid("summary_required", "this message is %d characters; one over %d characters needs a summary of at most %d characters, saying what you ask the agent for: put it under the A2A message's metadata as \"summary\"",
			utf8.RuneCountInString(in.Body), hub.SummaryNeeded, hub.MaxSummary)
	}
	var v *hub.ConversationView
	if c.Agent != nil {
		v, err = x.hub.OpenConversation(ctx, c.Agent, []string{ea.Agent.Handle()})
	} else {
		v, err = x.hub.OpenDirectAsPerson(ctx, c.Person, ea.Agent)
	}
	if err != nil {
		return nil, err
	}
	if in.ContextID != "" && in.ContextID != v.Conversation.ID {
		return nil, hub.Invalid("", "contextId %q is not your {conversation} with %s, which is %s: send with that contextId, or leave contextId out", hub.Echo(in.ContextID), ea.Agent.Handle(), v.Conversation.ID)
	}
	send := hub.SendInput{ConversationID: v.Conversation.ID, Body: in.Body, Summary: in.Summary, ClientMsgID: in.ClientMsgID}
	if in.TaskID != "" {
		prev, err := x.task(ctx, x.store, c, ea.Agent, in.TaskID)
		if err != nil {
			return nil, err
		}
		if prev.ConversationID != v.Conversation.ID {
			return nil, hub.Invalid("", "taskId %s belongs to another {conversation}; leave taskId out to start a task here", prev.ID)
		}
		send.ReplyToSeq = prev.Request.Seq
	}
	var res *hub.SendResult
	if c.Agent != nil {
		res, err = x.hub.SendA2ARequest(ctx, c.Agent, ea.Agent.ID, send)
	} else {
		res, err = x.hub.PostA2ARequestAsPerson(ctx, c.Person, ea.Agent.ID, send)
	}
	if err != nil {
		return nil, err
	}
	t, err := load(ctx, x.store, res.Message.ID, ea.Agent)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return t, nil
}

// task finds the caller's task with agent a; any other id is not_found.
func (x *Tasks) task(ctx context.Context, r reader, c Caller, a *hub.Agent, taskID string) (*Task, error) {
	req, err := r.A2ARequest(ctx, taskID)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && (req.CallerID != c.principalID() || req.AgentID != a.ID)) {
		return nil, hub.NotFound("no task %q of yours is with %s; a task's id is the one message/send returned", hub.Echo(taskID), a.Handle())
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	t, err := load(ctx, r, req.MessageID, a)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return t, nil
}

// Task is tasks/get: the caller's task with the exposed agent owner/slug,
// as it stands (§18).
func (x *Tasks) Task(ctx context.Context, c Caller, owner, slug, taskID string) (*Task, error) {
	ea, err := x.ExposedAgent(ctx, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(hub.ScopeRead); err != nil {
		return nil, err
	}
	return x.task(ctx, x.store, c, ea.Agent, taskID)
}

// Cancel is tasks/cancel (§18). A task the agent has not taken up —
// waiting in its inbox, or its last attempt failed — is withdrawn from the
// agent's inbox (it hears message.withdrawn) and canceled; the message
// stays in the conversation, as every message does. A task the agent is
// working on or has answered cannot be called back: that is a conflict
// with code not_cancelable, saying what to do instead. Canceling a
// canceled task is not an error.
func (x *Tasks) Cancel(ctx context.Context, c Caller, owner, slug, taskID string) (*Task, error) {
	ea, err := x.ExposedAgent(ctx, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(hub.ScopeWrite); err != nil {
		return nil, err
	}
	var t *Task
	err = x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		var err error
		if t, err = x.task(ctx, tx, c, ea.Agent, taskID); err != nil {
			return nil, err
		}
		if err := tx.LockConversation(ctx, t.ConversationID); err != nil {
			return nil, err
		}
		notCancelable := func(why string) error {
			return &hub.Error{Kind: hub.KindConflict, Code: "not_cancelable", Msg: "task " + t.ID + " is " + t.State + " and cannot be canceled: " + why}
		}
		switch {
		case t.State == Canceled:
			return nil, nil
		case t.Request.Status == hub.MessageHeld:
			return nil, notCancelable("it waits for your owner's review, and they may reject it under Approvals")
		case t.State == Working:
			return nil, notCancelable("the agent has taken it up; send a message in the same context asking it to stop")
		case t.State != Submitted && t.State != Failed:
			return nil, notCancelable("the agent has answered it already; there is nothing left to call back")
		}
		d, err := tx.Delivery(ctx, ea.Agent.ID, t.ID)
		if err != nil {
			return nil, err
		}
		now := x.hub.Now()
		d.State, d.StartedAt, d.AckedAt = hub.DeliveryWithdrawn, time.Time{}, now
		if err := tx.SetDeliveryState(ctx, d); err != nil {
			return nil, err
		}
		t.State, t.Note = state(t.Request, d, nil, 0)
		data, _ := json.Marshal(map[string]any{"message_id": t.ID})
		events := []*hub.Event{{RecipientID: ea.Agent.ID, Type: hub.EventMessageWithdrawn, ConversationID: t.ConversationID, MessageID: t.ID, Data: data, CreatedAt: now}}
		changed, err := hub.TaskChanged(ctx, tx, t.ID, now)
		return append(events, changed...), err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Watch hands yield the caller's task as it stands, then again each time
// its state, note or replies change, until it is Final, yield returns
// false, timeout passes (0: none), ctx ends or the hub shuts down (§18
// message/stream). It holds one of the caller's waits meanwhile (past
// Settings.WaitsPerAgent, or WaitsPerPerson, too_many_waits with
// retry_after_s). It waits on the caller's event stream — every change
// of a task is an event for its caller (a2a.task, message.new,
// pending.decided) — never by polling (hub.Watch).
func (x *Tasks) Watch(ctx context.Context, c Caller, owner, slug, taskID string, timeout time.Duration, yield func(*Task) bool) error {
	ea, err := x.ExposedAgent(ctx, owner, slug)
	if err != nil {
		return err
	}
	if err := c.require(hub.ScopeRead); err != nil {
		return err
	}
	last := ""
	return x.hub.Watch(ctx, c.principalID(), c.Agent == nil, "across your waits and A2A streams", timeout, func(ctx context.Context) (bool, error) {
		t, err := x.task(ctx, x.store, c, ea.Agent, taskID)
		if err != nil {
			return true, err
		}
		if seen := fmt.Sprintf("%s\x00%s\x00%d", t.State, t.Note, len(t.Replies)); seen != last {
			last = seen
			if !yield(t) {
				return true, nil
			}
		}
		return t.Final(), nil
	})
}

// Await is message/send with blocking: t as it stands once it is Final, or
// when timeout (at most hub.MaxWait) passes or ctx ends, whichever comes
// first. Blocking is a courtesy: with the caller's waits used up it
// answers t as it is at once, rather than refuse a message already sent.
func (x *Tasks) Await(ctx context.Context, c Caller, owner, slug string, t *Task, timeout time.Duration) (*Task, error) {
	if t.Final() {
		return t, nil
	}
	err := x.Watch(ctx, c, owner, slug, t.ID, min(timeout, hub.MaxWait), func(now *Task) bool {
		t = now
		return true
	})
	if e := (*hub.Error)(nil); errors.As(err, &e) && e.Code == "too_many_waits" {
		return x.Task(ctx, c, owner, slug, t.ID)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// A page of tasks (ListTasks, §18) holds at most MaxPage of them,
// DefaultPage when the caller names no size: A2A's own bounds.
const (
	DefaultPage = 50
	MaxPage     = 100
)

// Page is a page of a caller's tasks with an agent, newest first.
type Page struct {
	Tasks []*Task
	Total int    // the caller's tasks with the agent (in the conversation, when one is named), before paging
	Next  string // when more follow, the last task's id: the next page's after; "" on the last page
}

// List is ListTasks (§18): the caller's own tasks with the exposed agent
// owner/slug, newest first (by when they were sent), only those in
// conversationID unless it is "", at most limit (1–MaxPage) of them, those
// after the task after names ("": from the newest). An after that is no
// task of this listing is invalid.
func (x *Tasks) List(ctx context.Context, c Caller, owner, slug, conversationID, after string, limit int) (*Page, error) {
	ea, err := x.ExposedAgent(ctx, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(hub.ScopeRead); err != nil {
		return nil, err
	}
	if err := (hub.Range{Min: 1, Max: MaxPage}).Check("page size", int64(limit)); err != nil {
		return nil, err
	}
	var before *hub.A2ARequest
	if after != "" {
		before, err = x.store.A2ARequest(ctx, after)
		if errors.Is(err, hub.ErrNoRows) || err == nil && (before.CallerID != c.principalID() || before.AgentID != ea.Agent.ID ||
			conversationID != "" && before.ConversationID != conversationID) {
			return nil, hub.Invalid("", "%q is not where a listing of your tasks with %s left off; list again from the first page", hub.Echo(after), ea.Agent.Handle())
		}
		if err != nil {
			return nil, hub.AsError(err)
		}
	}
	reqs, total, err := x.store.A2ARequestsFrom(ctx, c.principalID(), ea.Agent.ID, conversationID, before, limit+1)
	if err != nil {
		return nil, hub.AsError(err)
	}
	page := &Page{Total: total, Tasks: []*Task{}}
	if len(reqs) > limit {
		reqs = reqs[:limit]
		page.Next = reqs[limit-1].MessageID
	}
	for _, r := range reqs {
		t, err := load(ctx, x.store, r.MessageID, ea.Agent)
		if err != nil {
			return nil, hub.AsError(err)
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}
