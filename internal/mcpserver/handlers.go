package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
)

type whoamiIn struct {
	Instance     string `json:"instance,omitempty" jsonschema:"this session's name, 2-40 of a-z 0-9 _ - (derive it from your working folder)"`
	InstanceNote string `json:"instance_note,omitempty" jsonschema:"one line on what this session works on"`
}

type instanceView struct {
	Name     string `json:"name"`
	Note     string `json:"note,omitempty"`
	LastSeen string `json:"last_seen"`
	Presence string `json:"presence"`
}

func (s *Server) whoami(ctx context.Context, c *call, in whoamiIn) (any, error) {
	w, err := s.hub.Whoami(ctx, c.caller, in.Instance, in.InstanceNote)
	if err != nil {
		return nil, err
	}
	me := w.Presence[c.caller.Agent.ID]
	instances := []instanceView{}
	for _, i := range w.Instances {
		instances = append(instances, instanceView{Name: i.Name, Note: i.Note, LastSeen: timeText(i.LastSeen), Presence: me.Session(i.Name).State})
	}
	grants := []map[string]any{}
	for _, g := range w.Grants {
		grants = append(grants, map[string]any{"contact": g.Contact, "allow_human": g.Grant.AllowHuman, "allow_agents": g.Grant.AllowAgents})
	}
	pending := []map[string]any{}
	for _, r := range w.PendingGrants {
		pending = append(pending, map[string]any{"request_id": r.ID, "allow_human": r.AllowHuman, "allow_agents": r.AllowAgents,
			"reason": r.Reason, "at": timeText(r.CreatedAt)})
	}
	a := c.caller.Agent
	next := []string{
		"check_inbox to see what waits for you",
		"wait_for_messages with latest_cursor to hear new messages as they arrive",
	}
	if len(w.Siblings) > 0 {
		next = append(next, "open_conversation with a sibling's handle to talk to it")
	}
	var home any
	if w.Home.Access != "" {
		home = map[string]any{"id": w.Home.Project.ID, "name": w.Home.Project.Name, "your_access": w.Home.Access}
		next = append(next, fmt.Sprintf("open_thread with project_id %q and a title your sessions share, like \"Plan\", to meet your other sessions and sibling agents in your home project", w.Home.Project.ID))
	}
	return map[string]any{
		"agent":                  agentView{Handle: a.Handle(), Description: a.Description, Goal: a.Goal, Mode: a.Mode},
		"owner":                  userView{Handle: c.caller.Owner.Handle, Name: c.caller.Owner.Name},
		"instance":               w.Instance,
		"instances":              instances,
		"siblings":               viewAgents(w.Siblings, w.Presence),
		"scopes":                 c.caller.Scopes,
		"grants":                 grants,
		"pending_grant_requests": pending,
		"home_project":           home,
		"latest_cursor":          w.LatestCursor,
		"next_steps":             next,
		"server_build":           c.prof.build,
		"untrusted":              true,
	}, nil
}

type noArgs struct{}

func (s *Server) listContacts(ctx context.Context, c *call, _ noArgs) (any, error) {
	ct, err := s.reach.ListContacts(ctx, c.caller)
	if err != nil {
		return nil, err
	}
	contacts := []map[string]any{}
	for _, r := range ct.Contacts {
		contacts = append(contacts, map[string]any{"handle": r.Person.Handle, "name": r.Person.Name, "status": r.Status,
			"allow_human": r.AllowHuman, "allow_agents": r.AllowAgents, "agents": viewAgents(r.Agents, ct.Presence)})
	}
	return map[string]any{
		"owner":          userView{Handle: ct.Owner.Handle, Name: ct.Owner.Name},
		"sibling_agents": viewAgents(ct.Siblings, ct.Presence),
		"contacts":       contacts,
		"untrusted":      true,
	}, nil
}

type listConversationsIn struct {
	Limit int    `json:"limit,omitempty" jsonschema:"how many, {min}-{max}"`
	After string `json:"after,omitempty" jsonschema:"next of the previous page, to read on"`
}

func (s *Server) listConversations(ctx context.Context, c *call, in listConversationsIn) (any, error) {
	ls, err := s.hub.ListConversations(ctx, c.caller, in.After, in.Limit)
	if err != nil {
		return nil, err
	}
	type row struct {
		conversationView
		Unread      int          `json:"unread"`
		LastMessage *messageLine `json:"last_message"`
	}
	rows := []row{}
	for _, l := range ls.Conversations {
		r := row{conversationView: viewConversation(&l.ConversationView), Unread: l.Unread}
		if l.Last != nil {
			line := lineOf(l.Last)
			r.LastMessage = &line
		}
		rows = append(rows, r)
	}
	out := map[string]any{"conversations": rows, "has_more": ls.Next != "", "untrusted": true}
	if ls.Next != "" {
		out["next"] = ls.Next
	}
	return out, nil
}

type openConversationIn struct {
	Handles []string `json:"handles" jsonschema:"who to talk to: \"alice\" (a person) or \"alice/planner\" (an agent)"`
}

func (s *Server) openConversation(ctx context.Context, c *call, in openConversationIn) (any, error) {
	v, err := s.hub.OpenConversation(ctx, c.caller, in.Handles)
	if err != nil {
		return nil, err
	}
	c.conversation = v.Conversation.ID
	return map[string]any{"status": hub.StatusOpen, "conversation_id": v.Conversation.ID, "conversation": viewConversation(v), "untrusted": true}, nil
}

type createThreadIn struct {
	Title        string   `json:"title" jsonschema:"what the task is, 1-{max} characters"`
	Goal         string   `json:"goal,omitempty" jsonschema:"what done looks like, up to {max} characters"`
	Participants []string `json:"participants,omitempty" jsonschema:"handles to bring in"`
}

func (s *Server) createThread(ctx context.Context, c *call, in createThreadIn) (any, error) {
	v, err := s.hub.CreateThread(ctx, c.caller, hub.ThreadSpec{Title: in.Title, Goal: in.Goal, Participants: in.Participants})
	if err != nil {
		return nil, err
	}
	c.conversation = v.Conversation.ID
	return map[string]any{"status": hub.StatusOpen, "conversation_id": v.Conversation.ID, "conversation": viewConversation(v), "untrusted": true}, nil
}

type addParticipantIn struct {
	ConversationID string `json:"conversation_id"`
	Handle         string `json:"handle" jsonschema:"the person or agent to add"`
}

func (s *Server) addParticipant(ctx context.Context, c *call, in addParticipantIn) (any, error) {
	c.conversation = in.ConversationID
	v, err := s.hub.AddParticipant(ctx, c.caller, in.ConversationID, in.Handle)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": "added", "conversation_id": v.Conversation.ID, "conversation": viewConversation(v), "untrusted": true}, nil
}

type sendMessageIn struct {
	ConversationID string          `json:"conversation_id"`
	Body           string          `json:"body" jsonschema:"the message, 1-{max} characters"`
	Summary        string          `json:"summary,omitempty"`
	Format         string          `json:"format,omitempty" jsonschema:"text or markdown"`
	Kind           string          `json:"kind,omitempty" jsonschema:"text, or an event post (tool_call, tool_result, thought, error, task) that reaches only those it mentions"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Mentions       []string        `json:"mentions,omitempty" jsonschema:"participants' handles"`
	ReplyToSeq     int64           `json:"reply_to_seq,omitempty" jsonschema:"the seq this answers"`
	NoReply        bool            `json:"no_reply,omitempty" jsonschema:"this is an acknowledgement or status: it must not be answered"`
	ToInstance     string          `json:"to_instance,omitempty" jsonschema:"the receiving agent's session this is meant for (a courtesy, not a filter)"`
	Instance       string          `json:"instance,omitempty" jsonschema:"your session's name"`
	ClientMsgID    string          `json:"client_msg_id,omitempty" jsonschema:"your id for this message, up to {max} characters: a retry with the same id returns the stored message"`
}

func (s *Server) sendMessage(ctx context.Context, c *call, in sendMessageIn) (any, error) {
	c.conversation = in.ConversationID
	r, err := s.hub.SendMessage(ctx, c.caller, hub.SendInput{
		ConversationID: in.ConversationID, Body: in.Body, Summary: in.Summary, Format: in.Format, Kind: in.Kind,
		Metadata: in.Metadata, Mentions: in.Mentions, ReplyToSeq: in.ReplyToSeq, NoReply: in.NoReply,
		ToInstance: in.ToInstance, Instance: in.Instance, ClientMsgID: in.ClientMsgID,
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"status": r.Message.Status, "conversation_id": r.Message.ConversationID, "message_id": r.Message.ID,
		"seq": r.Message.Seq, "recipients": r.Recipients, "listening": r.Listening, "created_at": timeText(r.Message.CreatedAt),
	}
	if r.Message.Status != hub.MessageSent {
		delete(out, "seq") // held for the owner's review: no seq yet
	}
	if r.Duplicate {
		out["duplicate"] = true
	}
	return out, nil
}

type readMessagesIn struct {
	ConversationID string `json:"conversation_id"`
	AfterSeq       int64  `json:"after_seq,omitempty" jsonschema:"return messages after this seq"`
	Limit          int    `json:"limit,omitempty" jsonschema:"at most this many, {min}-{max}"`
	MarkRead       *bool  `json:"mark_read,omitempty" jsonschema:"move your place and record the fetch"`
	Instance       string `json:"instance,omitempty" jsonschema:"your session's name: moves only its place"`
}

func (s *Server) readMessages(ctx context.Context, c *call, in readMessagesIn) (any, error) {
	c.conversation = in.ConversationID
	r, err := s.hub.ReadMessages(ctx, c.caller, hub.ReadInput{ConversationID: in.ConversationID, AfterSeq: in.AfterSeq,
		Limit: in.Limit, MarkRead: in.MarkRead, Instance: in.Instance})
	if err != nil {
		return nil, err
	}
	msgs := []messageView{}
	for _, m := range r.Messages {
		msgs = append(msgs, messageIn(m))
	}
	return map[string]any{"conversation_id": in.ConversationID, "messages": msgs, "next_after_seq": r.NextAfterSeq, "has_more": r.HasMore,
		"reads": viewReads(r.Reads), "untrusted": true}, nil
}

type readMessageIn struct {
	MessageID string `json:"message_id"`
	Instance  string `json:"instance,omitempty" jsonschema:"your session's name"`
}

func (s *Server) readMessage(ctx context.Context, c *call, in readMessageIn) (any, error) {
	m, err := s.hub.ReadMessage(ctx, c.caller, in.MessageID, in.Instance)
	if err != nil {
		return nil, err
	}
	c.conversation = m.ConversationID
	return map[string]any{"message": viewMessage(m), "untrusted": true}, nil
}

type checkInboxIn struct {
	Limit    int    `json:"limit,omitempty" jsonschema:"at most this many lines, {min}-{max}"`
	Instance string `json:"instance,omitempty" jsonschema:"your session's name"`
}

func (s *Server) checkInbox(ctx context.Context, c *call, in checkInboxIn) (any, error) {
	r, err := s.hub.Inbox(ctx, c.caller, in.Limit, in.Instance)
	if err != nil {
		return nil, err
	}
	rows := []inboxRow{}
	for _, it := range r.Items {
		rows = append(rows, viewInboxItem(it, in.Instance, s.hub.Stuck(&it.Delivery)))
	}
	answers := []answerView{}
	for _, q := range r.Answers {
		answers = append(answers, answerView{QuestionID: q.ID, Question: q.Question, Answer: q.Answer,
			ConversationID: q.ConversationID, Instance: q.Instance, At: timeText(q.AnsweredAt)})
	}
	return map[string]any{"total": r.Total, "messages": rows, "more": r.More, "answers": answers, "untrusted": true}, nil
}

type searchMessagesIn struct {
	Query          string `json:"query" jsonschema:"what to look for, up to {max} characters: words (every one must match), \"a phrase\", a OR b, -word to leave out"`
	ConversationID string `json:"conversation_id,omitempty" jsonschema:"only this conversation"`
	ProjectID      string `json:"project_id,omitempty" jsonschema:"only this project's threads"`
	From           string `json:"from,omitempty" jsonschema:"only messages from this sender: \"alice\" or \"alice/planner\""`
	Since          string `json:"since,omitempty" jsonschema:"only messages sent at or after this ISO 8601 time, like 2026-12-01T09:30:00Z"`
	Limit          int    `json:"limit,omitempty" jsonschema:"how many, {min}-{max}"`
}

func (s *Server) searchMessages(ctx context.Context, c *call, in searchMessagesIn) (any, error) {
	c.conversation = in.ConversationID
	r, err := s.finder.Search(ctx, c.caller, search.Input{Query: in.Query, ConversationID: in.ConversationID,
		ProjectID: in.ProjectID, From: in.From, Since: in.Since, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	rows := []searchRow{}
	for _, h := range r.Hits {
		rows = append(rows, viewSearchHit(h))
	}
	return map[string]any{"messages": rows, "has_more": r.More, "untrusted": true}, nil
}

type acknowledgeIn struct {
	MessageID string `json:"message_id"`
	Outcome   string `json:"outcome,omitempty" jsonschema:"done (you acted, or declined), processing (you start work on it) or failed (the attempt failed; it stays waiting)"`
	Error     string `json:"error,omitempty" jsonschema:"what went wrong, with outcome failed"`
}

func (s *Server) acknowledge(ctx context.Context, c *call, in acknowledgeIn) (any, error) {
	d, err := s.hub.Acknowledge(ctx, c.caller, in.MessageID, in.Outcome, in.Error)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": "acknowledged", "message_id": d.MessageID, "state": d.State, "attempts": d.Attempts}
	switch d.State {
	case hub.DeliveryFailed:
		out["status"], out["error"] = "failed_recorded", d.Error
	case hub.DeliveryProcessing:
		out["status"], out["started_at"] = "processing", timeText(d.StartedAt)
	}
	return out, nil
}

type waitIn struct {
	Cursor   *string `json:"cursor,omitempty" jsonschema:"the last cursor you received (from whoami or a previous wait)"`
	TimeoutS *int64  `json:"timeout_s,omitempty" jsonschema:"seconds to wait, {min}-{max}"`
	Instance string  `json:"instance,omitempty" jsonschema:"your session's name: a new wait of it ends its previous one"`
}

type eventView struct {
	Cursor         string       `json:"cursor"` // resume after this event
	Type           string       `json:"type"`
	At             string       `json:"at"`
	ConversationID string       `json:"conversation_id,omitempty"`
	Message        *messageView `json:"message,omitempty"`
	Data           any          `json:"data,omitempty"`
	ForYou         *bool        `json:"for_you,omitempty"`
	FromYou        *bool        `json:"from_you,omitempty"`
	HeldBy         string       `json:"held_by,omitempty"` // another live session holds the conversation
}

// startWait begins a wait_for_messages; waitCall carries it on.
func (s *Server) startWait(ctx context.Context, c *call, in waitIn) (parker, error) {
	timeout, err := hub.WaitTimeout(in.TimeoutS)
	if err != nil {
		return nil, err
	}
	wc := &waitCall{s: s}
	// The older protocol era does not cancel a handler when the client hangs
	// up, so watch the HTTP request itself too (research §2.6 b), unless
	// ctx ends with it already (the lean path's).
	if rc := requestContext(ctx); rc != nil && rc.Done() != ctx.Done() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		stop := context.AfterFunc(rc, cancel)
		wc.unwatch = func() {
			stop()
			cancel()
		}
	}
	if wc.w, err = s.hub.StartWait(ctx, c.caller, hub.WaitInput{Cursor: in.Cursor, Timeout: timeout, Instance: in.Instance}); err != nil {
		wc.close()
		return nil, err
	}
	return wc, nil
}

// waitCall is a wait_for_messages under way.
type waitCall struct {
	s       *Server
	w       *hub.Waiting
	unwatch func() // stops watching the HTTP request
}

func (wc *waitCall) step() bool { return wc.w.Step() }
func (wc *waitCall) sleep()     { wc.w.Sleep() }

func (wc *waitCall) close() {
	if wc.w != nil {
		wc.w.Close()
	}
	if wc.unwatch != nil {
		wc.unwatch()
		wc.unwatch = nil
	}
}

func (wc *waitCall) answer() (any, error) {
	r, err := wc.w.Result()
	wc.close()
	if err != nil {
		return nil, err
	}
	s := wc.s
	events := []eventView{}
	for _, e := range r.Events {
		ev := eventView{Cursor: s.hub.Cursor(e), Type: e.Type, At: timeText(e.CreatedAt), ConversationID: e.ConversationID}
		if len(e.Data) > 0 {
			ev.Data = e.Data
		}
		a, addressed := r.Addressing[e.ID]
		if addressed {
			ev.ForYou, ev.FromYou, ev.HeldBy = &a.ForYou, &a.FromYou, a.HeldBy
		}
		if e.Message != nil {
			m := viewMessage(e.Message)
			if e.Message.ConversationID == e.ConversationID {
				m = messageIn(e.Message) // the event names it
			}
			if addressed {
				// Each message says it itself, besides its event.
				m.ForYou, m.FromYou, m.HeldBy = ev.ForYou, ev.FromYou, ev.HeldBy
			}
			ev.Message = &m
		}
		events = append(events, ev)
	}
	out := map[string]any{"events": events, "cursor": r.Cursor, "timed_out": r.TimedOut, "untrusted": true}
	if r.Superseded {
		out["superseded"] = true
	}
	return out, nil
}

type markUnreadIn struct {
	ConversationID string `json:"conversation_id"`
	Seq            int64  `json:"seq" jsonschema:"the first seq to read as new"`
	Instance       string `json:"instance,omitempty" jsonschema:"your session's name: moves only its place"`
}

func (s *Server) markUnread(ctx context.Context, c *call, in markUnreadIn) (any, error) {
	c.conversation = in.ConversationID
	place, err := s.hub.MarkUnread(ctx, c.caller, in.ConversationID, in.Seq, in.Instance)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": "marked_unread", "conversation_id": in.ConversationID, "last_read_seq": place}, nil
}

type claimIn struct {
	ConversationID string `json:"conversation_id"`
	Instance       string `json:"instance" jsonschema:"the session that takes the conversation"`
	Takeover       bool   `json:"takeover,omitempty" jsonschema:"take it from another live session of yours"`
}

func (s *Server) claimConversation(ctx context.Context, c *call, in claimIn) (any, error) {
	c.conversation = in.ConversationID
	cl, err := s.hub.ClaimConversation(ctx, c.caller, in.ConversationID, in.Instance, in.Takeover)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": "claimed", "conversation_id": cl.ConversationID, "instance": cl.Instance}
	if cl.Previous != "" {
		out["taken_from"] = cl.Previous
	}
	return out, nil
}

type requestGrantIn struct {
	ContactHandle string `json:"contact_handle" jsonschema:"the person (a contact of your owner) you need to reach"`
	AllowHuman    *bool  `json:"allow_human,omitempty" jsonschema:"reach the person"`
	AllowAgents   bool   `json:"allow_agents,omitempty" jsonschema:"reach the person's agents"`
	Reason        string `json:"reason" jsonschema:"why you need it, for your owner"`
}

func (s *Server) requestGrant(ctx context.Context, c *call, in requestGrantIn) (any, error) {
	human := hub.DefaultAllowHuman
	if in.AllowHuman != nil {
		human = *in.AllowHuman
	}
	r, err := s.hub.RequestGrant(ctx, c.caller, in.ContactHandle, human, in.AllowAgents, in.Reason)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": hub.StatusPending, "request_id": r.ID}, nil
}

type askOwnerIn struct {
	Question       string   `json:"question" jsonschema:"what you need your owner to decide or tell you"`
	Instance       string   `json:"instance,omitempty" jsonschema:"your session's name: the answer is for it"`
	ConversationID string   `json:"conversation_id,omitempty" jsonschema:"the conversation the question is about"`
	Options        []string `json:"options,omitempty"`
}

func (s *Server) askOwner(ctx context.Context, c *call, in askOwnerIn) (any, error) {
	c.conversation = in.ConversationID
	q, err := s.hub.AskOwner(ctx, c.caller, in.Question, in.Instance, in.ConversationID, in.Options)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": hub.StatusPending, "question_id": q.ID}, nil
}

// answerView is an owner's answer in check_inbox.
type answerView struct {
	QuestionID     string `json:"question_id"`
	Question       string `json:"question"`
	Answer         string `json:"answer"`
	ConversationID string `json:"conversation_id,omitempty"`
	Instance       string `json:"instance,omitempty"`
	At             string `json:"at"`
}

type requestCloseIn struct {
	ConversationID string `json:"conversation_id"`
}

func (s *Server) requestClose(ctx context.Context, c *call, in requestCloseIn) (any, error) {
	c.conversation = in.ConversationID
	conv, err := s.hub.RequestClose(ctx, c.caller, in.ConversationID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": conv.Status, "conversation_id": conv.ID}, nil
}
