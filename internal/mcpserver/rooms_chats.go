package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// The rooms profile's chats (§10.5): rooms and their participants, messages
// and event posts, the processing loop and an agent's context, on both
// sides; and the shapes they answer in.

// pageView is where a page of a listing stands.
type pageView struct {
	Page     int  `json:"page"`
	PageSize int  `json:"page_size"`
	HasMore  bool `json:"has_more"`
	Total    *int `json:"total,omitempty"`
}

// paged fills in a page's defaults as the hub applies them.
func paged(number, size int, page hub.Page, more bool, total *int) pageView {
	if number == 0 {
		number = 1
	}
	if size == 0 {
		size = page.Default
	}
	return pageView{Page: number, PageSize: size, HasMore: more, Total: total}
}

// pageOf cuts a page of a whole listing out of rows by number and size,
// with where the page stands.
func pageOf[T any](rows []T, number, size int) ([]T, pageView, error) {
	rows, more, err := hub.PageOf(rows, hub.Paging{Number: number, Size: size}, hub.RoomPage)
	if rows == nil {
		rows = []T{}
	}
	return rows, paged(number, size, hub.RoomPage, more, nil), err
}

// principalType is a principal kind in this profile's words.
func principalType(kind string) string {
	if kind == hub.PrincipalAgent {
		return "Agent"
	}
	return "User"
}

type roomParticipantView struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Handle   string `json:"handle"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	JoinedAt string `json:"joined_at"`
}

// nameOf is what a participant is called in a room: an agent's slug, a
// person's handle.
func nameOf(handle string) string {
	if _, slug, ok := strings.Cut(handle, "/"); ok {
		return slug
	}
	return handle
}

func viewRoomParticipants(ps []hub.Participant) []roomParticipantView {
	out := []roomParticipantView{}
	for _, p := range ps {
		if p.Archived {
			continue
		}
		out = append(out, roomParticipantView{ID: p.PrincipalID, Type: principalType(p.Kind), Handle: p.Handle, Name: nameOf(p.Handle),
			Role: p.Role, JoinedAt: timeText(p.JoinedAt)})
	}
	return out
}

type roomView struct {
	ID           string                `json:"id"`
	Title        string                `json:"title"`
	Type         string                `json:"type"` // room (routed by mention), direct, group or thread
	Status       string                `json:"status"`
	TaskID       string                `json:"task_id,omitempty"`
	ProjectID    string                `json:"project_id,omitempty"`
	Participants []roomParticipantView `json:"participants,omitempty"`
	LastSeq      int64                 `json:"last_seq"`
	CreatedAt    string                `json:"created_at"`
	UpdatedAt    string                `json:"updated_at"`
}

func viewRoom(v *hub.ConversationView, withParticipants bool) roomView {
	c := v.Conversation
	r := roomView{ID: c.ID, Title: c.Title, Type: c.Kind, Status: c.State(), TaskID: c.ItemID, ProjectID: c.ProjectID,
		LastSeq: c.LastSeq, CreatedAt: timeText(c.CreatedAt), UpdatedAt: timeText(c.UpdatedAt)}
	if c.ByMention {
		r.Type = "room"
	}
	if withParticipants {
		r.Participants = viewRoomParticipants(v.Participants)
	}
	return r
}

type roomSenderView struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Handle string `json:"handle"`
}

type roomMessageView struct {
	ID          string          `json:"id"`
	ChatID      string          `json:"chat_id"`
	Seq         int64           `json:"seq"`
	MessageType string          `json:"message_type"`
	Content     string          `json:"content"`
	Sender      roomSenderView  `json:"sender"`
	Mentions    []string        `json:"mentions,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
	Provenance  hub.Provenance  `json:"provenance"`
	CreatedAt   string          `json:"created_at"`
}

func viewRoomMessage(m *hub.Message) roomMessageView {
	return roomMessageView{ID: m.ID, ChatID: m.ConversationID, Seq: m.Seq, MessageType: m.Kind, Content: m.Body,
		Sender:   roomSenderView{ID: m.SenderID, Type: principalType(m.SenderKind), Handle: m.SenderHandle},
		Mentions: m.Mentions, Metadata: m.Metadata, Provenance: m.Provenance(), CreatedAt: timeText(m.CreatedAt)}
}

func viewRoomMessages(ms []*hub.Message) []roomMessageView {
	out := []roomMessageView{}
	for _, m := range ms {
		out = append(out, viewRoomMessage(m))
	}
	return out
}

// workView is a message delivered to the agent with its processing state
// in this profile's words: pending, processing, processed or failed.
type workView struct {
	roomMessageView
	Status    string `json:"status"`
	Attempts  int    `json:"attempts"`
	Error     string `json:"error,omitempty"`
	StartedAt string `json:"started_at,omitempty"`
	Stuck     bool   `json:"stuck,omitempty"`
}

var workStatus = map[string]string{
	hub.DeliveryWaiting: "pending", hub.DeliveryProcessing: "processing", hub.DeliveryDone: "processed", hub.DeliveryFailed: "failed",
}

func (s *Server) viewWork(it hub.InboxItem) workView {
	d := it.Delivery
	w := workView{roomMessageView: viewRoomMessage(it.Message), Status: workStatus[d.State], Attempts: d.Attempts, Stuck: s.hub.Stuck(&d)}
	if d.State == hub.DeliveryFailed {
		w.Error = d.Error // the last attempt's; a later attempt's state says nothing of it
	}
	if !d.StartedAt.IsZero() {
		w.StartedAt = timeText(d.StartedAt)
	}
	return w
}

type roomsPageIn struct {
	Page     int `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize int `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
}

type roomChatIn struct {
	ChatID string `json:"chat_id" jsonschema:"the chat room's id"`
}

func (s *Server) roomsHealth(ctx context.Context, c *call, _ noArgs) (any, error) {
	return map[string]any{"status": "ok", "server": c.prof.build, "connected_as": c.caller.Agent.Handle(), "type": "Agent"}, nil
}

func (s *Server) roomsMe(ctx context.Context, c *call, _ noArgs) (any, error) {
	a := c.caller.Agent
	return map[string]any{"id": a.ID, "handle": a.Handle(), "name": a.DisplayName(), "description": a.Description, "goal": a.Goal, "mode": a.Mode,
		"type": "Agent", "owner": map[string]any{"id": c.caller.Owner.ID, "handle": c.caller.Owner.Handle}, "scopes": c.caller.Scopes,
		"created_at": timeText(a.CreatedAt), "untrusted": true}, nil
}

// roomList is a page of chats as both sides list them.
func roomList(ls []hub.ConversationListing, more bool, in roomsPageIn) map[string]any {
	chats := []roomView{}
	for _, l := range ls {
		chats = append(chats, viewRoom(&l.ConversationView, false))
	}
	return map[string]any{"chats": chats, "pagination": paged(in.Page, in.PageSize, hub.RoomPage, more, nil), "untrusted": true}
}

func (s *Server) roomsChats(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	ls, more, err := s.rooms.Rooms(ctx, c.caller, hub.Paging{Number: in.Page, Size: in.PageSize})
	if err != nil {
		return nil, err
	}
	return roomList(ls, more, in), nil
}

func (s *Server) roomsChat(ctx context.Context, c *call, in roomChatIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.Room(ctx, c.caller, in.ChatID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"chat": viewRoom(v, true), "untrusted": true}, nil
}

type roomCreateIn struct {
	TaskID string `json:"task_id,omitempty" jsonschema:"an item of a project you are in, to link the room to"`
	Title  string `json:"title,omitempty" jsonschema:"what the room is for, up to {max} characters (default: the task's title)"`
}

func (s *Server) roomsCreateChat(ctx context.Context, c *call, in roomCreateIn) (any, error) {
	v, err := s.hub.CreateRoom(ctx, c.caller, hub.RoomSpec{Title: in.Title, TaskID: in.TaskID})
	if err != nil {
		return nil, err
	}
	c.conversation = v.Conversation.ID
	return map[string]any{"chat": viewRoom(v, true), "untrusted": true}, nil
}

func (s *Server) roomsParticipants(ctx context.Context, c *call, in roomChatIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.Room(ctx, c.caller, in.ChatID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"chat_id": v.Conversation.ID, "participants": viewRoomParticipants(v.Participants), "untrusted": true}, nil
}

type roomAddIn struct {
	ChatID        string `json:"chat_id" jsonschema:"the chat room's id"`
	ParticipantID string `json:"participant_id" jsonschema:"the id (or handle) of the agent or person to add"`
	Role          string `json:"role,omitempty" jsonschema:"owner, admin or member (the default)"`
}

func (s *Server) roomsAddParticipant(ctx context.Context, c *call, in roomAddIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.AddParticipantAs(ctx, c.caller, in.ChatID, in.ParticipantID, in.Role)
	if err != nil {
		return nil, err
	}
	return participantChange(v, "added", in.ParticipantID), nil
}

// participantChange is the answer to adding or removing a participant.
func participantChange(v *hub.ConversationView, what, who string) map[string]any {
	return map[string]any{what: true, "chat_id": v.Conversation.ID, "participant_id": who, "participants": viewRoomParticipants(v.Participants), "untrusted": true}
}

type roomRemoveIn struct {
	ChatID        string `json:"chat_id" jsonschema:"the chat room's id"`
	ParticipantID string `json:"participant_id" jsonschema:"the id (or handle) of the participant to remove"`
}

func (s *Server) roomsRemoveParticipant(ctx context.Context, c *call, in roomRemoveIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.RemoveParticipant(ctx, c.caller, in.ChatID, in.ParticipantID)
	if err != nil {
		return nil, err
	}
	return participantChange(v, "removed", in.ParticipantID), nil
}

type roomSendIn struct {
	ChatID     string `json:"chat_id" jsonschema:"the chat room's id"`
	Content    string `json:"content" jsonschema:"the message, 1-{max} characters"`
	Recipients string `json:"recipients,omitempty" jsonschema:"comma-separated names of participants to mention, like \"weather agent,sarah\""`
	Mentions   string `json:"mentions,omitempty" jsonschema:"a JSON array of participants to mention by id, like [{\"id\": \"agt_…\", \"name\": \"weather agent\"}]; wins over recipients"`
}

// mentionRefs are the participants a send names: the ids of mentions, a
// JSON array of {"id","name"}, when given, else the names in recipients.
func mentionRefs(recipients, mentions string) ([]string, error) {
	if strings.TrimSpace(mentions) != "" {
		var ms []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(mentions), &ms); err != nil {
			return nil, hub.Errorf(hub.KindInvalid, `mentions must be a JSON array of {"id": "…", "name": "…"}, like [{"id": "agt_…", "name": "weather agent"}]`)
		}
		var refs []string
		for _, m := range ms {
			ref := m.ID
			if ref == "" {
				ref = m.Name
			}
			refs = append(refs, ref)
		}
		return refs, nil
	}
	var refs []string
	for name := range strings.SplitSeq(recipients, ",") {
		if name = strings.TrimSpace(name); name != "" {
			refs = append(refs, name)
		}
	}
	return refs, nil
}

func (s *Server) roomsSend(ctx context.Context, c *call, in roomSendIn) (any, error) {
	c.conversation = in.ChatID
	refs, err := mentionRefs(in.Recipients, in.Mentions)
	if err != nil {
		return nil, err
	}
	r, err := s.hub.SendMessage(ctx, c.caller, hub.SendInput{ConversationID: in.ChatID, Body: in.Content, Mentions: refs})
	if err != nil {
		return nil, err
	}
	return sent(r), nil
}

// sent is the answer to a send: the message, its status, how many it
// reached, and how many of those listen now (§19).
func sent(r *hub.SendResult) map[string]any {
	return map[string]any{"message": viewRoomMessage(r.Message), "status": r.Message.Status, "recipients": r.Recipients, "listening": r.Listening, "untrusted": true}
}

type roomEventIn struct {
	ChatID      string `json:"chat_id" jsonschema:"the chat room's id"`
	Content     string `json:"content" jsonschema:"what happened, in words, 1-{max} characters"`
	MessageType string `json:"message_type" jsonschema:"tool_call, tool_result, thought, error or task"`
	Metadata    string `json:"metadata,omitempty" jsonschema:"a JSON object as text, like {\"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"NYC\"}}}"`
}

func (s *Server) roomsEvent(ctx context.Context, c *call, in roomEventIn) (any, error) {
	c.conversation = in.ChatID
	if in.MessageType == "" || in.MessageType == hub.MessageText {
		return nil, hub.Errorf(hub.KindInvalid, "message_type must be one of %s; a text message goes through create_agent_chat_message", strings.Join(hub.EventPostKinds, ", "))
	}
	r, err := s.hub.SendMessage(ctx, c.caller, hub.SendInput{ConversationID: in.ChatID, Body: in.Content, Kind: in.MessageType, Metadata: json.RawMessage(in.Metadata)})
	if err != nil {
		return nil, err
	}
	return sent(r), nil
}

type roomWorkIn struct {
	ChatID   string `json:"chat_id" jsonschema:"the chat room's id"`
	Status   string `json:"status,omitempty" jsonschema:"pending, processing, processed, failed or all; left out: everything not processed"`
	Page     int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize int    `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
}

func (s *Server) roomsWork(ctx context.Context, c *call, in roomWorkIn) (any, error) {
	c.conversation = in.ChatID
	p, err := s.rooms.Work(ctx, c.caller, in.ChatID, in.Status, hub.Paging{Number: in.Page, Size: in.PageSize})
	if err != nil {
		return nil, err
	}
	rows := []workView{}
	for _, it := range p.Items {
		rows = append(rows, s.viewWork(it))
	}
	return map[string]any{"chat_id": in.ChatID, "messages": rows, "pagination": paged(in.Page, in.PageSize, hub.RoomPage, p.More, &p.Total), "untrusted": true}, nil
}

func (s *Server) roomsNext(ctx context.Context, c *call, in roomChatIn) (any, error) {
	c.conversation = in.ChatID
	it, err := s.rooms.NextWork(ctx, c.caller, in.ChatID)
	if err != nil {
		return nil, err
	}
	if it == nil {
		return map[string]any{"chat_id": in.ChatID, "message": nil}, nil
	}
	return map[string]any{"chat_id": in.ChatID, "message": s.viewWork(*it), "untrusted": true}, nil
}

type roomMarkIn struct {
	ChatID    string `json:"chat_id" jsonschema:"the chat room's id"`
	MessageID string `json:"message_id" jsonschema:"the message's id"`
}

// roomsMark is a processing step without an error: processing or
// processed.
func (s *Server) roomsMark(outcome string) func(ctx context.Context, c *call, in roomMarkIn) (any, error) {
	return func(ctx context.Context, c *call, in roomMarkIn) (any, error) {
		return s.process(ctx, c, hub.ProcessInput{ConversationID: in.ChatID, MessageID: in.MessageID, Outcome: outcome})
	}
}

type roomFailIn struct {
	ChatID    string `json:"chat_id" jsonschema:"the chat room's id"`
	MessageID string `json:"message_id" jsonschema:"the message's id"`
	Error     string `json:"error" jsonschema:"why the attempt failed, up to {max} characters"`
}

func (s *Server) roomsFail(ctx context.Context, c *call, in roomFailIn) (any, error) {
	return s.process(ctx, c, hub.ProcessInput{ConversationID: in.ChatID, MessageID: in.MessageID, Outcome: hub.OutcomeFailed, Error: in.Error})
}

func (s *Server) process(ctx context.Context, c *call, in hub.ProcessInput) (any, error) {
	c.conversation = in.ConversationID
	d, err := s.hub.Process(ctx, c.caller, in)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"success": true, "chat_id": in.ConversationID, "message_id": d.MessageID, "status": workStatus[d.State], "attempt_number": d.Attempts}
	if d.State == hub.DeliveryFailed {
		out["error"] = d.Error
	}
	return out, nil
}

type roomContextIn struct {
	ChatID   string `json:"chat_id" jsonschema:"the chat room's id"`
	Page     int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize int    `json:"page_size,omitempty" jsonschema:"messages per page, {min}-{max}"`
}

func (s *Server) roomsContext(ctx context.Context, c *call, in roomContextIn) (any, error) {
	c.conversation = in.ChatID
	p, err := s.rooms.ChatContext(ctx, c.caller, in.ChatID, hub.Paging{Number: in.Page, Size: in.PageSize})
	if err != nil {
		return nil, err
	}
	return map[string]any{"chat_id": in.ChatID, "messages": viewRoomMessages(p.Messages),
		"pagination": paged(in.Page, in.PageSize, hub.ContextPage, p.More, &p.Total), "untrusted": true}, nil
}

// ---- the user side

func (s *Server) roomsPersonHealth(ctx context.Context, c *call, _ noArgs) (any, error) {
	return map[string]any{"status": "ok", "server": c.prof.build, "connected_as": c.person.Handle, "type": "User"}, nil
}

func (s *Server) roomsMyChats(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	ls, more, err := s.rooms.PersonRooms(ctx, c.person, hub.Paging{Number: in.Page, Size: in.PageSize})
	if err != nil {
		return nil, err
	}
	return roomList(ls, more, in), nil
}

func (s *Server) roomsMyChat(ctx context.Context, c *call, in roomChatIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.PersonRoom(ctx, c.person, in.ChatID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"chat": viewRoom(v, true), "untrusted": true}, nil
}

func (s *Server) roomsMyCreateChat(ctx context.Context, c *call, in roomCreateIn) (any, error) {
	v, err := s.hub.CreateRoomAsPerson(ctx, c.person, hub.RoomSpec{Title: in.Title, TaskID: in.TaskID})
	if err != nil {
		return nil, err
	}
	c.conversation = v.Conversation.ID
	return map[string]any{"chat": viewRoom(v, true), "untrusted": true}, nil
}

type roomMessagesIn struct {
	ChatID      string `json:"chat_id" jsonschema:"the chat room's id"`
	Page        int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize    int    `json:"page_size,omitempty" jsonschema:"messages per page, {min}-{max}"`
	MessageType string `json:"message_type,omitempty" jsonschema:"only messages of this type: text, tool_call, tool_result, thought, error or task"`
	Since       string `json:"since,omitempty" jsonschema:"only messages sent after this time, ISO 8601 (like 2026-12-01T09:30:00Z)"`
}

func (s *Server) roomsMyMessages(ctx context.Context, c *call, in roomMessagesIn) (any, error) {
	c.conversation = in.ChatID
	since, err := hub.ParseTime("since", in.Since)
	if err != nil {
		return nil, err
	}
	p, err := s.rooms.RoomMessages(ctx, c.person, in.ChatID, in.MessageType, since, hub.Paging{Number: in.Page, Size: in.PageSize})
	if err != nil {
		return nil, err
	}
	return map[string]any{"chat_id": in.ChatID, "messages": viewRoomMessages(p.Messages),
		"pagination": paged(in.Page, in.PageSize, hub.RoomPage, p.More, &p.Total), "untrusted": true}, nil
}

type roomPersonSendIn struct {
	ChatID     string `json:"chat_id" jsonschema:"the chat room's id"`
	Content    string `json:"content" jsonschema:"the message, 1-{max} characters"`
	Recipients string `json:"recipients" jsonschema:"comma-separated names of the participants it is for (at least one), like \"weather agent,sarah\""`
}

func (s *Server) roomsMySend(ctx context.Context, c *call, in roomPersonSendIn) (any, error) {
	c.conversation = in.ChatID
	refs, _ := mentionRefs(in.Recipients, "")
	if len(refs) == 0 {
		return nil, hub.Errorf(hub.KindInvalid, "recipients is required: name at least one participant, like \"weather agent\" (list them with list_my_chat_participants)")
	}
	r, err := s.hub.SendAsPerson(ctx, c.person, hub.SendInput{ConversationID: in.ChatID, Body: in.Content, Mentions: refs})
	if err != nil {
		return nil, err
	}
	return sent(r), nil
}

type roomParticipantsIn struct {
	ChatID          string `json:"chat_id" jsonschema:"the chat room's id"`
	ParticipantType string `json:"participant_type,omitempty" jsonschema:"User or Agent: only those"`
}

func (s *Server) roomsMyParticipants(ctx context.Context, c *call, in roomParticipantsIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.PersonRoom(ctx, c.person, in.ChatID)
	if err != nil {
		return nil, err
	}
	ps := viewRoomParticipants(v.Participants)
	switch t := in.ParticipantType; {
	case strings.EqualFold(t, "User"), strings.EqualFold(t, "Agent"):
		ps = slices.DeleteFunc(ps, func(p roomParticipantView) bool { return !strings.EqualFold(p.Type, t) })
	case t != "":
		return nil, hub.Errorf(hub.KindInvalid, "participant_type must be User or Agent (got %q)", hub.Preview(t, 40))
	}
	return map[string]any{"chat_id": v.Conversation.ID, "participants": ps, "untrusted": true}, nil
}

func (s *Server) roomsMyAddParticipant(ctx context.Context, c *call, in roomAddIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.AddParticipantAsPerson(ctx, c.person, in.ChatID, in.ParticipantID, in.Role)
	if err != nil {
		return nil, err
	}
	return participantChange(v, "added", in.ParticipantID), nil
}

func (s *Server) roomsMyRemoveParticipant(ctx context.Context, c *call, in roomRemoveIn) (any, error) {
	c.conversation = in.ChatID
	v, err := s.hub.RemoveParticipantAsPerson(ctx, c.person, in.ChatID, in.ParticipantID)
	if err != nil {
		return nil, err
	}
	return participantChange(v, "removed", in.ParticipantID), nil
}

func (s *Server) roomsMyProfile(ctx context.Context, c *call, _ noArgs) (any, error) {
	u := c.person
	first, last, _ := strings.Cut(u.Name, " ")
	return map[string]any{"id": u.ID, "handle": u.Handle, "name": u.Name, "first_name": first, "last_name": last, "email": u.Email, "type": "User",
		"role": map[bool]string{true: "admin", false: "member"}[u.Admin], "created_at": timeText(u.CreatedAt), "untrusted": true}, nil
}

func (s *Server) roomsMyAgents(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	as, err := s.hub.Agents(ctx, c.person.Handle, false)
	if err != nil {
		return nil, err
	}
	as, pg, err := pageOf(as, in.Page, in.PageSize)
	if err != nil {
		return nil, err
	}
	rows := []map[string]any{}
	for _, a := range as {
		rows = append(rows, map[string]any{"id": a.ID, "handle": a.Handle(), "name": a.DisplayName(), "description": a.Description, "mode": a.Mode,
			"created_at": timeText(a.CreatedAt)})
	}
	return map[string]any{"agents": rows, "pagination": pg, "untrusted": true}, nil
}
