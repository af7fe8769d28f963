package mcpserver

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

// The rooms profile's contacts, peers and profiles (§3, §10.5). Consent
// stays with people: an agent's contact request asks its owner, and is
// reported in that product's words — pending, approved, rejected,
// cancelled.

// contactStatus is a contact's status in this profile's words.
func contactStatus(s string) string {
	if s == hub.ContactAccepted {
		return "approved"
	}
	return s
}

type roomContactView struct {
	ID          string `json:"id,omitempty"`
	Handle      string `json:"handle"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Relation    string `json:"relation,omitempty"` // owner, sibling, or an agent of a contact
}

// roomsAgentContacts is who the agent may talk to now: its owner, its
// siblings, and the contacts of its owner (with their agents) it may reach.
func (s *Server) roomsAgentContacts(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	ct, err := s.reach.ListContacts(ctx, c.caller)
	if err != nil {
		return nil, err
	}
	rows := []roomContactView{{ID: ct.Owner.ID, Handle: ct.Owner.Handle, Name: ct.Owner.Name, Type: "User", Relation: "owner"}}
	for _, a := range ct.Siblings {
		rows = append(rows, roomContactView{ID: a.ID, Handle: a.Handle(), Name: a.DisplayName(), Type: "Agent", Description: a.Description, Relation: "sibling"})
	}
	for _, r := range ct.Contacts {
		if r.Status == hub.StatusAllowed && r.AllowHuman {
			rows = append(rows, roomContactView{ID: r.Person.ID, Handle: r.Person.Handle, Name: r.Person.Name, Type: "User", Relation: "contact"})
		}
		for _, a := range r.Agents {
			rows = append(rows, roomContactView{ID: a.ID, Handle: a.Handle(), Name: a.DisplayName(), Type: "Agent", Description: a.Description, Relation: "agent of " + r.Person.Handle})
		}
	}
	page, pg, err := pageOf(rows, in.Page, in.PageSize)
	if err != nil {
		return nil, err
	}
	return map[string]any{"contacts": page, "pagination": pg, "untrusted": true}, nil
}

type roomAddContactIn struct {
	Handle  string `json:"handle" jsonschema:"the person or agent to reach, like bob or bob/helper"`
	Message string `json:"message,omitempty" jsonschema:"why you want to reach them, for your owner, up to {max} characters"`
}

func (s *Server) roomsAddAgentContact(ctx context.Context, c *call, in roomAddContactIn) (any, error) {
	r, err := s.reach.AgentContactRequest(ctx, c.caller, in.Handle, in.Message)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"handle": r.Handle, "status": r.Status, "reason": r.Reason}
	if r.RequestID != "" {
		out["request_id"] = r.RequestID
	}
	return out, nil
}

type roomContactRefIn struct {
	ContactID string `json:"contact_id,omitempty" jsonschema:"the contact's id (or give handle)"`
	Handle    string `json:"handle,omitempty" jsonschema:"the contact's handle (or give contact_id)"`
}

// roomsRemoveAgentContact asks the owner to end a contact (§10.5): the
// answer is pending, with the ask's id, and where the owner decides.
func (s *Server) roomsRemoveAgentContact(ctx context.Context, c *call, in roomContactRefIn) (any, error) {
	q, p, err := s.reach.AgentRemoveContact(ctx, c.caller, in.ContactID, in.Handle)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": false, "status": hub.AskPending, "request_id": q.ID, "handle": p.Handle, "created_at": timeText(q.CreatedAt),
		"reason": "contacts are your owner @" + c.caller.Owner.Handle + "'s: they decide " + dashboardWay(hub.Action{Name: hub.ActionListApprovals}) +
			", and their answer comes back to you as owner.answer"}, nil
}

type roomAgentRequestsIn struct {
	Page       int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize   int    `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
	SentStatus string `json:"sent_status,omitempty" jsonschema:"pending, approved, rejected, cancelled or all (the default)"`
}

type roomGrantRequestView struct {
	ID          string `json:"id"`
	Handle      string `json:"handle"`
	Status      string `json:"status"`
	Message     string `json:"message,omitempty"`
	CreatedAt   string `json:"created_at"`
	RespondedAt string `json:"responded_at,omitempty"`
}

func (s *Server) roomsAgentContactRequests(ctx context.Context, c *call, in roomAgentRequestsIn) (any, error) {
	rs, err := s.reach.AgentContactRequests(ctx, c.caller, in.SentStatus)
	if err != nil {
		return nil, err
	}
	rs, pg, err := pageOf(rs, in.Page, in.PageSize)
	if err != nil {
		return nil, err
	}
	sent := []roomGrantRequestView{}
	for _, r := range rs {
		sent = append(sent, roomGrantRequestView{ID: r.ID, Handle: r.ContactHandle, Status: r.Status, Message: r.Reason,
			CreatedAt: timeText(r.CreatedAt), RespondedAt: timeText(r.DecidedAt)})
	}
	// Requests to reach an agent go to its owner, who decides; the agent
	// sees them and its owner's decisions.
	asks, err := s.reach.AgentReceivedContactRequests(ctx, c.caller)
	if err != nil {
		return nil, err
	}
	received := []roomGrantRequestView{}
	for _, a := range asks {
		status := a.Ask.Status
		if status == hub.AskDenied {
			status = hub.GrantRejected
		}
		received = append(received, roomGrantRequestView{ID: a.Ask.ID, Handle: a.Agent, Status: status,
			CreatedAt: timeText(a.Ask.CreatedAt), RespondedAt: timeText(a.Ask.DecidedAt)})
	}
	return map[string]any{"received": received, "sent": sent, "pagination": pg, "untrusted": true}, nil
}

type roomRespondIn struct {
	Action    string `json:"action" jsonschema:"approve, reject or cancel"`
	Handle    string `json:"handle,omitempty" jsonschema:"the handle the request is to or from (or give request_id)"`
	RequestID string `json:"request_id,omitempty" jsonschema:"the request's id (or give handle)"`
}

func (s *Server) roomsRespondAgentContact(ctx context.Context, c *call, in roomRespondIn) (any, error) {
	switch strings.ToLower(strings.TrimSpace(in.Action)) {
	case "approve", "reject":
		return nil, s.reach.AgentDecideContact(ctx, c.caller)
	case "cancel":
		r, err := s.reach.CancelAgentContactRequest(ctx, c.caller, in.RequestID, in.Handle)
		if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "request_id": r.ID, "handle": r.ContactHandle, "status": r.Status}, nil
	}
	return nil, hub.Errorf(hub.KindInvalid, "action must be approve, reject or cancel (got %q)", hub.Preview(in.Action, 40))
}

// ---- the user side

type roomPersonView struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
	Name   string `json:"name"`
	Type   string `json:"type"`
}

func (s *Server) roomsMyContacts(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	cs, err := s.hub.Contacts(ctx, c.person)
	if err != nil {
		return nil, err
	}
	var rows []map[string]any
	for _, v := range cs {
		if v.Contact.Status == hub.ContactAccepted {
			rows = append(rows, map[string]any{"id": v.Contact.ID, "contact": roomPersonView{ID: v.Other.ID, Handle: v.Other.Handle, Name: v.Other.Name, Type: "User"},
				"handle": v.Other.Handle, "email": v.Other.Email, "type": "User", "since": timeText(v.Contact.DecidedAt)})
		}
	}
	page, pg, err := pageOf(rows, in.Page, in.PageSize)
	if err != nil {
		return nil, err
	}
	return map[string]any{"contacts": page, "pagination": pg, "untrusted": true}, nil
}

type roomCreateRequestIn struct {
	RecipientHandle string `json:"recipient_handle" jsonschema:"the person to add, with or without @"`
	Message         string `json:"message,omitempty" jsonschema:"a note to them, up to {max} characters"`
}

func (s *Server) roomsCreateContactRequest(ctx context.Context, c *call, in roomCreateRequestIn) (any, error) {
	ct, err := s.reach.RequestContact(ctx, c.person, in.RecipientHandle, in.Message)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": ct.ID, "status": contactStatus(ct.Status), "recipient_handle": strings.TrimPrefix(strings.TrimSpace(in.RecipientHandle), "@"),
		"message": ct.Message, "created_at": timeText(ct.RequestedAt), "untrusted": true}, nil
}

type roomRequestView struct {
	ID          string         `json:"id"`
	Status      string         `json:"status"`
	Message     string         `json:"message,omitempty"`
	From        roomPersonView `json:"from"`
	To          roomPersonView `json:"to"`
	CreatedAt   string         `json:"created_at"`
	RespondedAt string         `json:"responded_at,omitempty"`
}

// contactRequests lists u's requests on one side.
func (s *Server) contactRequests(ctx context.Context, c *call, sent bool, status string, in roomsPageIn) (any, error) {
	rs, err := s.reach.ContactRequests(ctx, c.person, sent, status)
	if err != nil {
		return nil, err
	}
	rs, pg, err := pageOf(rs, in.Page, in.PageSize)
	if err != nil {
		return nil, err
	}
	me := roomPersonView{ID: c.person.ID, Handle: c.person.Handle, Name: c.person.Name, Type: "User"}
	rows := []roomRequestView{}
	for _, r := range rs {
		other := roomPersonView{ID: r.UserID, Handle: r.Handle, Name: r.Name, Type: "User"}
		v := roomRequestView{ID: r.ID, Status: contactStatus(r.Status), Message: r.Message, From: other, To: me,
			CreatedAt: timeText(r.RequestedAt), RespondedAt: timeText(r.DecidedAt)}
		if r.Sent {
			v.From, v.To = me, other
		}
		rows = append(rows, v)
	}
	return map[string]any{"requests": rows, "pagination": pg, "untrusted": true}, nil
}

func (s *Server) roomsReceivedRequests(ctx context.Context, c *call, in roomsPageIn) (any, error) {
	return s.contactRequests(ctx, c, false, "", in)
}

type roomSentRequestsIn struct {
	Status   string `json:"status,omitempty" jsonschema:"pending, approved, rejected, cancelled or all (the default)"`
	Page     int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize int    `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
}

func (s *Server) roomsSentRequests(ctx context.Context, c *call, in roomSentRequestsIn) (any, error) {
	return s.contactRequests(ctx, c, true, in.Status, roomsPageIn{Page: in.Page, PageSize: in.PageSize})
}

type roomRequestIDIn struct {
	RequestID string `json:"request_id" jsonschema:"the contact request's id"`
}

// roomsDecide approves or rejects a request u received.
func (s *Server) roomsDecide(approve bool) func(ctx context.Context, c *call, in roomRequestIDIn) (any, error) {
	return func(ctx context.Context, c *call, in roomRequestIDIn) (any, error) {
		ct, err := s.hub.DecideContactRequest(ctx, c.person, in.RequestID, approve)
		if err != nil {
			return nil, err
		}
		return map[string]any{"success": true, "id": ct.ID, "status": contactStatus(ct.Status)}, nil
	}
}

func (s *Server) roomsCancelRequest(ctx context.Context, c *call, in roomRequestIDIn) (any, error) {
	ct, err := s.reach.CancelContactRequest(ctx, c.person, in.RequestID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "id": ct.ID, "status": contactStatus(ct.Status)}, nil
}

type roomHandleIn struct {
	Handle string `json:"handle" jsonschema:"the handle to look up, like bob or bob/helper"`
}

func (s *Server) roomsResolveHandle(ctx context.Context, c *call, in roomHandleIn) (any, error) {
	r, err := s.reach.ResolveHandle(ctx, c.person, in.Handle)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"id": r.ID, "handle": r.Handle, "name": r.Name, "type": principalType(r.Kind), "untrusted": true}
	if r.Description != "" {
		out["description"] = r.Description
	}
	return out, nil
}

func (s *Server) roomsRemoveMyContact(ctx context.Context, c *call, in roomContactRefIn) (any, error) {
	ct, err := s.reach.RemoveContact(ctx, c.person, in.ContactID, in.Handle)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": true, "id": ct.ID, "status": "removed"}, nil
}

type roomProfileIn struct {
	FirstName string `json:"first_name,omitempty" jsonschema:"your new first name"`
	LastName  string `json:"last_name,omitempty" jsonschema:"your new last name"`
}

// roomsUpdateProfile sets the display name from the parts given, keeping
// the part left out.
func (s *Server) roomsUpdateProfile(ctx context.Context, c *call, in roomProfileIn) (any, error) {
	first, last, _ := strings.Cut(c.person.Name, " ")
	if in.FirstName == "" && in.LastName == "" {
		return nil, hub.Errorf(hub.KindInvalid, "give first_name, last_name or both")
	}
	if in.FirstName != "" {
		first = in.FirstName
	}
	if in.LastName != "" {
		last = in.LastName
	}
	u, err := s.rooms.UpdateUserName(ctx, c.person, strings.TrimSpace(strings.TrimSpace(first)+" "+strings.TrimSpace(last)))
	if err != nil {
		return nil, err
	}
	c.person = u
	return s.roomsMyProfile(ctx, c, noArgs{})
}

type roomRegisterIn struct {
	Name        string `json:"name" jsonschema:"the agent's name, like \"weather agent\" (its handle is made from it)"`
	Description string `json:"description" jsonschema:"what the agent is for, 1-{max} characters"`
}

func (s *Server) roomsRegisterAgent(ctx context.Context, c *call, in roomRegisterIn) (any, error) {
	a, key, err := s.rooms.RegisterAgent(ctx, c.person, in.Name, in.Description)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": a.ID, "handle": a.Handle(), "name": a.DisplayName(), "description": a.Description, "type": "Agent",
		"api_key": key, "note": "the api_key is shown once; it connects to this server's /mcp/rooms/ (and /mcp/) as this agent", "untrusted": true}, nil
}

type roomPeersIn struct {
	NotInChat string `json:"not_in_chat,omitempty" jsonschema:"a chat room's id: leave out who is in it already"`
	Page      int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize  int    `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
}

type roomPeerView struct {
	ID          string `json:"id"`
	Handle      string `json:"handle"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Public      bool   `json:"public,omitempty"`
}

// peerPage is a page of peers as both sides list them.
func peerPage(ps []reach.Peer, page, size int) (any, error) {
	ps, pg, err := pageOf(ps, page, size)
	if err != nil {
		return nil, err
	}
	rows := []roomPeerView{}
	for _, p := range ps {
		rows = append(rows, roomPeerView{ID: p.ID, Handle: p.Handle, Name: p.Name, Type: principalType(p.Kind), Description: p.Description, Public: p.Public})
	}
	return map[string]any{"peers": rows, "pagination": pg, "untrusted": true}, nil
}

func (s *Server) roomsAgentPeers(ctx context.Context, c *call, in roomPeersIn) (any, error) {
	c.conversation = in.NotInChat
	ps, err := s.reach.Peers(ctx, c.caller, in.NotInChat)
	if err != nil {
		return nil, err
	}
	return peerPage(ps, in.Page, in.PageSize)
}

type roomMyPeersIn struct {
	NotInChat string `json:"not_in_chat,omitempty" jsonschema:"a chat room's id: leave out who is in it already"`
	PeerType  string `json:"peer_type,omitempty" jsonschema:"User or Agent: only those"`
	Page      int    `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize  int    `json:"page_size,omitempty" jsonschema:"rows per page, {min}-{max}"`
}

func (s *Server) roomsMyPeers(ctx context.Context, c *call, in roomMyPeersIn) (any, error) {
	c.conversation = in.NotInChat
	ps, err := s.reach.PersonPeers(ctx, c.person, in.NotInChat, in.PeerType)
	if err != nil {
		return nil, err
	}
	return peerPage(ps, in.Page, in.PageSize)
}
