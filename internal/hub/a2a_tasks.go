package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A2A tasks (§18) are conversations' messages: message/send stores the
// request in the direct conversation between the caller and the agent (the
// A2A contextId), by the same hub call a send_message makes, and the task's
// id is that message's id. Nothing about a task is kept beyond the message,
// its delivery to the agent (§5) and the agent's replies; its state is
// read from them whenever it is asked for, by taskState.

// Task states, in A2A's words.
const (
	TaskSubmitted     = "submitted"
	TaskWorking       = "working"
	TaskInputRequired = "input-required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCanceled      = "canceled"
	TaskRejected      = "rejected"
)

// EventTaskChanged tells an A2A caller that the agent's processing of its
// request changed (an attempt started, failed or was acknowledged, or the
// task was canceled), or that a held reply of the agent's in the
// conversation was rejected. Its message_id is the task's id (none for a
// rejected reply).
const EventTaskChanged = "a2a.task"

// MaxTaskReplies is the most replies a task carries; older ones stay in
// the conversation.
const MaxTaskReplies = 50

// A2ACaller is who calls an agent over A2A: an agent by its token (Agent)
// or a person by theirs (Person). Exactly one is set.
type A2ACaller struct {
	Agent  *Caller
	Person *User
}

func (c A2ACaller) principalID() string {
	if c.Agent != nil {
		return c.Agent.Agent.ID
	}
	return c.Person.ID
}

// require is the agent token's scope check; a person's token has every one.
func (c A2ACaller) require(scope string) error {
	if c.Agent == nil {
		return nil
	}
	return c.Agent.Require(scope)
}

// A2ASend is a message/send: the text of the A2A message and what its
// metadata and ids say.
type A2ASend struct {
	ContextID   string // a conversation id; "" opens or reuses the direct one
	TaskID      string // a task of the caller's this message follows up; ""
	Body        string
	Summary     string // metadata.summary
	ClientMsgID string // the A2A messageId: a retry returns the task made before
}

// Task is an A2A task as the hub reads it (§18).
type Task struct {
	ID             string // the request message's id
	ConversationID string
	Agent          *Agent
	Request        *Message
	State          string
	Note           string     // why it stands where it does, in Palaver's words
	Replies        []*Message // the agent's text replies to it, oldest first
	Attempts       int
}

// Final reports whether the state ends a stream: nothing changes it until
// someone acts (input-required: the caller; failed: the agent trying again).
func (t *Task) Final() bool {
	switch t.State {
	case TaskSubmitted, TaskWorking:
		return false
	}
	return true
}

// asks reports whether a reply asks the caller something: its words end
// with a question mark and it was not sent as a notice (no_reply, §7).
func asks(m *Message) bool {
	return !m.NoReply && strings.HasSuffix(strings.TrimSpace(m.Body), "?")
}

// taskState is the rule by which a task follows the agent's processing of
// the request (§5, §18):
//   - held for review by the caller's owner: submitted; rejected: rejected;
//   - waiting in the agent's inbox: submitted; an attempt running: working;
//   - the last attempt failed and none started since: failed (it becomes
//     working again when the agent retries);
//   - withdrawn (canceled, or the agent lost the conversation): canceled;
//   - acknowledged: working while a reply of the agent's waits for its
//     owner's review; else input-required when the last reply asks
//     something (asks), else completed.
func taskState(req *Message, d *Delivery, replies []*Message, heldReplies int) (state, note string) {
	switch {
	case req.Status == MessageHeld:
		return TaskSubmitted, "held for review by your owner; it reaches the agent once they approve it"
	case req.Status == MessageRejected:
		return TaskRejected, "your owner rejected this message; it never reached the agent"
	case d == nil:
		return TaskSubmitted, "waiting in the agent's inbox"
	}
	switch d.State {
	case DeliveryProcessing:
		return TaskWorking, fmt.Sprintf("the agent is working on it (attempt %d)", d.Attempts)
	case DeliveryFailed:
		return TaskFailed, fmt.Sprintf("attempt %d failed: %s", d.Attempts, d.Error)
	case DeliveryWithdrawn:
		return TaskCanceled, "withdrawn: it left the agent's inbox unprocessed"
	case DeliveryDone:
		switch {
		case heldReplies > 0:
			return TaskWorking, "the agent's reply waits for its owner's review"
		case len(replies) > 0 && asks(replies[len(replies)-1]):
			return TaskInputRequired, "the agent asks you something: answer with a message in the same context"
		}
		return TaskCompleted, "the agent acknowledged it"
	}
	return TaskSubmitted, "waiting in the agent's inbox"
}

// loadTask reads a task: the request, its delivery to the agent, and the
// agent's text replies to it: those that name it (reply_to_seq), and those
// that name no message, after it up to the caller's next message.
func loadTask(ctx context.Context, r Reader, messageID string, a *Agent) (*Task, error) {
	m, err := r.Message(ctx, messageID)
	if err != nil {
		return nil, err
	}
	t := &Task{ID: m.ID, ConversationID: m.ConversationID, Agent: a, Request: m}
	var d *Delivery
	if m.Status == MessageSent {
		if d, err = r.Delivery(ctx, a.ID, m.ID); errors.Is(err, ErrNoRows) {
			d = nil
		} else if err != nil {
			return nil, err
		}
	}
	held := 0
	if d != nil && d.State == DeliveryDone {
		t.Attempts = d.Attempts
		after, err := r.Messages(ctx, m.ConversationID, m.Seq, 4*MaxTaskReplies)
		if err != nil {
			return nil, err
		}
		spoke := false // the caller spoke again: unaddressed replies answer that
		for _, x := range after {
			if x.SenderID == m.SenderID {
				spoke = true
				continue
			}
			addressed := x.ReplyToSeq == m.Seq || x.ReplyToSeq == 0 && !spoke
			if x.SenderID == a.ID && x.Kind == MessageText && addressed && len(t.Replies) < MaxTaskReplies {
				t.Replies = append(t.Replies, x)
			}
		}
		pending, err := r.HeldMessages(ctx, a.OwnerID)
		if err != nil {
			return nil, err
		}
		for _, x := range pending {
			if x.ConversationID == m.ConversationID && x.SenderID == a.ID && !x.CreatedAt.Before(m.CreatedAt) {
				held++
			}
		}
	} else if d != nil {
		t.Attempts = d.Attempts
	}
	t.State, t.Note = taskState(m, d, t.Replies, held)
	return t, nil
}

// noteA2A records that m is an A2A request to agentID (none when "").
func noteA2A(ctx context.Context, tx Tx, agentID string, m *Message) error {
	if agentID == "" {
		return nil
	}
	return tx.InsertA2ARequest(ctx, &A2ARequest{MessageID: m.ID, AgentID: agentID, CallerID: m.SenderID,
		ConversationID: m.ConversationID, CreatedAt: m.CreatedAt})
}

// taskChanged is the a2a.task event for the caller of an A2A request
// whose processing changed; none when the message is no A2A request.
func taskChanged(ctx context.Context, tx Tx, messageID string, now time.Time) ([]*Event, error) {
	r, err := tx.A2ARequest(ctx, messageID)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []*Event{{RecipientID: r.CallerID, Type: EventTaskChanged, ConversationID: r.ConversationID, MessageID: r.MessageID, CreatedAt: now}}, nil
}

// SendA2A is an A2A message/send to the exposed agent owner/slug (§18): it
// opens or reuses the direct conversation between the caller and the
// agent — as open_conversation does, with its consent and refusals (§3) —
// and sends the text there as send_message does (brakes, review,
// provenance, client_msg_id; §4, §7), or as a person writes. The task is
// the stored message. A contextId other than that conversation, or a
// taskId that is not the caller's there, is invalid.
func (h *Hub) SendA2A(ctx context.Context, c A2ACaller, owner, slug string, in A2ASend) (*Task, error) {
	ea, err := exposedAgent(ctx, h.store, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(ScopeWrite); err != nil {
		return nil, err
	}
	if c.Agent != nil && strings.TrimSpace(in.Summary) == "" && utf8.RuneCountInString(in.Body) > SummaryNeeded {
		return nil, invalid("summary_required", "this message is %d characters; one over %d characters needs a summary of at most %d characters, saying what you ask the agent for: put it under the A2A message's metadata as \"summary\"",
			utf8.RuneCountInString(in.Body), SummaryNeeded, MaxSummary)
	}
	var v *ConversationView
	if c.Agent != nil {
		v, err = h.OpenConversation(ctx, c.Agent, []string{ea.Agent.Handle()})
	} else {
		v, err = h.personDirect(ctx, c.Person, ea.Agent)
	}
	if err != nil {
		return nil, err
	}
	if in.ContextID != "" && in.ContextID != v.Conversation.ID {
		return nil, invalid("", "contextId %q is not your {conversation} with %s, which is %s: send with that contextId, or leave contextId out", echo(in.ContextID), ea.Agent.Handle(), v.Conversation.ID)
	}
	send := SendInput{ConversationID: v.Conversation.ID, Body: in.Body, Summary: in.Summary, ClientMsgID: in.ClientMsgID, a2aAgent: ea.Agent.ID}
	if in.TaskID != "" {
		prev, err := h.task(ctx, h.store, c, ea.Agent, in.TaskID)
		if err != nil {
			return nil, err
		}
		if prev.ConversationID != v.Conversation.ID {
			return nil, invalid("", "taskId %s belongs to another {conversation}; leave taskId out to start a task here", prev.ID)
		}
		send.ReplyToSeq = prev.Request.Seq
	}
	var res *SendResult
	if c.Agent != nil {
		res, err = h.SendMessage(ctx, c.Agent, send)
	} else {
		res, err = h.postAsPerson(ctx, c.Person, send)
	}
	if err != nil {
		return nil, err
	}
	t, err := loadTask(ctx, h.store, res.Message.ID, ea.Agent)
	if err != nil {
		return nil, AsError(err)
	}
	return t, nil
}

// personDirect opens or reuses the direct conversation between a person
// and an agent they may reach (§3: their own, or a public one).
func (h *Hub) personDirect(ctx context.Context, u *User, a *Agent) (*ConversationView, error) {
	var view *ConversationView
	err := retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			if a.OwnerID != u.ID && !a.Public {
				return nil, deny("contact", "a person reaches another owner's agent only when its owner made it public; call %s with a token of one of your agents that %s let in (a token of that agent; its {open_conversation} asks them), or ask %s to make it public",
					a.Handle(), a.OwnerHandle, a.OwnerHandle)
			}
			var opened []*Event
			var err error
			view, opened, err = h.openDirect(ctx, tx, directKey([]string{u.ID, a.ID}), creatorPerson(u), []*Principal{agentPrincipal(a)})
			return opened, err
		})
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// task finds the caller's task with agent a; any other id is not_found.
func (h *Hub) task(ctx context.Context, r Reader, c A2ACaller, a *Agent, taskID string) (*Task, error) {
	req, err := r.A2ARequest(ctx, taskID)
	if errors.Is(err, ErrNoRows) || (err == nil && (req.CallerID != c.principalID() || req.AgentID != a.ID)) {
		return nil, notFound("no task %q of yours is with %s; a task's id is the one message/send returned", echo(taskID), a.Handle())
	}
	if err != nil {
		return nil, AsError(err)
	}
	t, err := loadTask(ctx, r, req.MessageID, a)
	if err != nil {
		return nil, AsError(err)
	}
	return t, nil
}

// A2ATask is tasks/get: the caller's task with the exposed agent
// owner/slug, as it stands (§18).
func (h *Hub) A2ATask(ctx context.Context, c A2ACaller, owner, slug, taskID string) (*Task, error) {
	ea, err := exposedAgent(ctx, h.store, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(ScopeRead); err != nil {
		return nil, err
	}
	return h.task(ctx, h.store, c, ea.Agent, taskID)
}

// CancelA2ATask is tasks/cancel (§18). A task the agent has not taken up —
// waiting in its inbox, or its last attempt failed — is withdrawn from the
// agent's inbox (it hears message.withdrawn) and canceled; the message
// stays in the conversation, as every message does. A task the agent is
// working on or has answered cannot be called back: that is a conflict
// with code not_cancelable, saying what to do instead. Canceling a
// canceled task is not an error.
func (h *Hub) CancelA2ATask(ctx context.Context, c A2ACaller, owner, slug, taskID string) (*Task, error) {
	ea, err := exposedAgent(ctx, h.store, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(ScopeWrite); err != nil {
		return nil, err
	}
	var t *Task
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		var err error
		if t, err = h.task(ctx, tx, c, ea.Agent, taskID); err != nil {
			return nil, err
		}
		if err := tx.LockConversation(ctx, t.ConversationID); err != nil {
			return nil, err
		}
		notCancelable := func(why string) error {
			return &Error{Kind: KindConflict, Code: "not_cancelable", Msg: "task " + t.ID + " is " + t.State + " and cannot be canceled: " + why}
		}
		switch {
		case t.State == TaskCanceled:
			return nil, nil
		case t.Request.Status == MessageHeld:
			return nil, notCancelable("it waits for your owner's review, and they may reject it under Approvals")
		case t.State == TaskWorking:
			return nil, notCancelable("the agent has taken it up; send a message in the same context asking it to stop")
		case t.State != TaskSubmitted && t.State != TaskFailed:
			return nil, notCancelable("the agent has answered it already; there is nothing left to call back")
		}
		d, err := tx.Delivery(ctx, ea.Agent.ID, t.ID)
		if err != nil {
			return nil, err
		}
		now := h.now()
		d.State, d.StartedAt, d.AckedAt = DeliveryWithdrawn, time.Time{}, now
		if err := tx.SetDeliveryState(ctx, d); err != nil {
			return nil, err
		}
		t.State, t.Note = taskState(t.Request, d, nil, 0)
		data, _ := json.Marshal(map[string]any{"message_id": t.ID})
		events := []*Event{{RecipientID: ea.Agent.ID, Type: EventMessageWithdrawn, ConversationID: t.ConversationID, MessageID: t.ID, Data: data, CreatedAt: now}}
		changed, err := taskChanged(ctx, tx, t.ID, now)
		return append(events, changed...), err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// WatchA2ATask hands yield the caller's task as it stands, then again each
// time its state, note or replies change, until it is Final, yield returns
// false, timeout passes (0: none), ctx ends or the hub shuts down (§18
// message/stream). It holds one of the caller's waits meanwhile (past
// Settings.WaitsPerAgent, or WaitsPerPerson, too_many_waits with
// retry_after_s). It waits on the caller's event stream — every change
// of a task is an event for its caller (a2a.task, message.new,
// pending.decided) — never by polling.
func (h *Hub) WatchA2ATask(ctx context.Context, c A2ACaller, owner, slug, taskID string, timeout time.Duration, yield func(*Task) bool) error {
	ea, err := exposedAgent(ctx, h.store, owner, slug)
	if err != nil {
		return err
	}
	if err := c.require(ScopeRead); err != nil {
		return err
	}
	id := c.principalID()
	// A stream holds one of the caller's waits, as wait_for_messages does
	// (§6), so no caller parks without bound.
	limit := h.settings.WaitsPerAgent
	if c.Agent == nil {
		limit = h.settings.WaitsPerPerson
	}
	ctx, release, err := h.acquireWait(ctx, id, "", limit, "across your waits and A2A streams")
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before the first read: a commit after this point wakes
	// us, and one before it is seen by the read (§13).
	wake, cancel := h.waker.Subscribe(id)
	defer cancel()
	var deadline <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	last := ""
	for {
		queried := h.commits.now()
		t, err := h.task(ctx, h.store, c, ea.Agent, taskID)
		if err != nil {
			return err
		}
		if seen := fmt.Sprintf("%s\x00%s\x00%d", t.State, t.Note, len(t.Replies)); seen != last {
			last = seen
			if !yield(t) {
				return nil
			}
		}
		if t.Final() {
			return nil
		}
		switch h.sleep(ctx, id, queried, wake, nil, nil, deadline) {
		case wokeByTimeout, wokeByShutdown:
			return nil
		case wokeByDone:
			return ctx.Err()
		}
	}
}

// AwaitA2ATask is message/send with blocking: t as it stands once it is
// Final, or when timeout (at most MaxWait) passes or ctx ends, whichever
// comes first. Blocking is a courtesy: with the caller's waits used up it
// answers t as it is at once, rather than refuse a message already sent.
func (h *Hub) AwaitA2ATask(ctx context.Context, c A2ACaller, owner, slug string, t *Task, timeout time.Duration) (*Task, error) {
	if t.Final() {
		return t, nil
	}
	err := h.WatchA2ATask(ctx, c, owner, slug, t.ID, min(timeout, MaxWait), func(now *Task) bool {
		t = now
		return true
	})
	if e := (*Error)(nil); errors.As(err, &e) && e.Code == "too_many_waits" {
		return h.A2ATask(ctx, c, owner, slug, t.ID)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// A page of tasks (ListTasks, §18) holds at most MaxTaskPage of them,
// DefaultTaskPage when the caller names no size: A2A's own bounds.
const (
	DefaultTaskPage = 50
	MaxTaskPage     = 100
)

// TaskPage is a page of a caller's tasks with an agent, newest first.
type TaskPage struct {
	Tasks []*Task
	Total int    // the caller's tasks with the agent (in the conversation, when one is named), before paging
	Next  string // when more follow, the last task's id: the next page's after; "" on the last page
}

// A2ATasks is ListTasks (§18): the caller's own tasks with the exposed
// agent owner/slug, newest first (by when they were sent), only those in
// conversationID unless it is "", at most limit (1–MaxTaskPage) of them,
// those after the task after names ("": from the newest). An after that is
// no task of this listing is invalid.
func (h *Hub) A2ATasks(ctx context.Context, c A2ACaller, owner, slug, conversationID, after string, limit int) (*TaskPage, error) {
	ea, err := exposedAgent(ctx, h.store, owner, slug)
	if err != nil {
		return nil, err
	}
	if err := c.require(ScopeRead); err != nil {
		return nil, err
	}
	if err := (Range{1, MaxTaskPage}).Check("page size", int64(limit)); err != nil {
		return nil, err
	}
	var before *A2ARequest
	if after != "" {
		before, err = h.store.A2ARequest(ctx, after)
		if errors.Is(err, ErrNoRows) || err == nil && (before.CallerID != c.principalID() || before.AgentID != ea.Agent.ID ||
			conversationID != "" && before.ConversationID != conversationID) {
			return nil, invalid("", "%q is not where a listing of your tasks with %s left off; list again from the first page", echo(after), ea.Agent.Handle())
		}
		if err != nil {
			return nil, AsError(err)
		}
	}
	reqs, total, err := h.store.A2ARequestsFrom(ctx, c.principalID(), ea.Agent.ID, conversationID, before, limit+1)
	if err != nil {
		return nil, AsError(err)
	}
	page := &TaskPage{Total: total, Tasks: []*Task{}}
	if len(reqs) > limit {
		reqs = reqs[:limit]
		page.Next = reqs[limit-1].MessageID
	}
	for _, r := range reqs {
		t, err := loadTask(ctx, h.store, r.MessageID, ea.Agent)
		if err != nil {
			return nil, AsError(err)
		}
		page.Tasks = append(page.Tasks, t)
	}
	return page, nil
}
