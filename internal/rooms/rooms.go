// Package rooms is what the rooms profile reads of an agent's or a
// person's rooms (DESIGN.md §10.5): the rooms they take part in, a page by
// number (Rooms, PersonRooms), an agent's work in one room by processing
// state and the next message to work on (Work, NextWork), and what it
// rehydrates from (ChatContext); a room's history as a person reads it
// (RoomMessages); and the person's side of the profile: an agent
// registered in one step (register.go) and a display name (profile.go).
// Creating rooms, sending, the processing lifecycle and who may see a room
// stay in the hub, which every send and every step goes through. The MCP
// face calls the Rooms here.
package rooms

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Store is what the Rooms read of the hub's store.
type Store interface {
	Work(ctx context.Context, agentID, conversationID string, states []string, offset, limit int) ([]hub.InboxItem, int, error)
	ChatContext(ctx context.Context, conversationID, agentID, handle string, offset, limit int) ([]*hub.Message, int, error)
	ConversationsOf(ctx context.Context, principalID string, before time.Time, beforeID string, limit int) ([]*hub.Conversation, error)
	AgentByHandle(ctx context.Context, ownerHandle, slug string) (*hub.Agent, error)
	MessagesWhere(ctx context.Context, conversationID, kind string, since time.Time, offset, limit int) ([]*hub.Message, int, error)
}

// Rooms is the rooms profile's reads over the hub and its store; the
// faces decode, call one of its methods, and render.
type Rooms struct {
	hub   *hub.Hub // who may see a room, its listings
	store Store
}

// New returns the Rooms over h and its store.
func New(h *hub.Hub, s Store) *Rooms { return &Rooms{hub: h, store: s} }

// Work statuses (§5, §10.5): what an agent lists of its work in one
// conversation. "" is everything not yet processed.
var workStates = map[string][]string{
	"":           {hub.DeliveryWaiting, hub.DeliveryProcessing, hub.DeliveryFailed},
	"pending":    {hub.DeliveryWaiting, hub.DeliveryFailed},
	"processing": {hub.DeliveryProcessing},
	"processed":  {hub.DeliveryDone},
	"failed":     {hub.DeliveryFailed},
	"all":        {hub.DeliveryWaiting, hub.DeliveryProcessing, hub.DeliveryFailed, hub.DeliveryDone},
}

// WorkStatuses are the statuses Work takes, besides "".
var WorkStatuses = []string{"pending", "processing", "processed", "failed", "all"}

// WorkPage is a page of an agent's work in one conversation, oldest first.
type WorkPage struct {
	Items []hub.InboxItem
	Total int
	More  bool
}

// Work lists the messages delivered to the agent in one conversation by
// processing state, oldest first (§5): by default everything not processed
// — waiting, processing (a stuck attempt included) and failed; pending is
// what waits for an attempt (waiting, or failed with none running).
func (x *Rooms) Work(ctx context.Context, c *hub.Caller, conversationID, status string, pg hub.Paging) (*WorkPage, error) {
	states, ok := workStates[strings.ToLower(strings.TrimSpace(status))]
	if !ok {
		return nil, hub.Invalid("", "status must be one of %s, or left out for everything not processed (got %q)", strings.Join(WorkStatuses, ", "), hub.Echo(status))
	}
	offset, size, err := hub.RoomPage.Window(pg)
	if err != nil {
		return nil, err
	}
	v, err := x.hub.Room(ctx, c, conversationID)
	if err != nil {
		return nil, err
	}
	items, total, err := x.store.Work(ctx, c.Agent.ID, v.Conversation.ID, states, offset, size)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return &WorkPage{Items: items, Total: total, More: offset+len(items) < total}, nil
}

// NextWork is the oldest message in the conversation the agent has not
// processed — waiting, failed, or processing (a crashed agent resumes its
// own) — or nil when there is none (§10.5).
func (x *Rooms) NextWork(ctx context.Context, c *hub.Caller, conversationID string) (*hub.InboxItem, error) {
	p, err := x.Work(ctx, c, conversationID, "", hub.Paging{Number: 1, Size: 1})
	if err != nil || len(p.Items) == 0 {
		return nil, err
	}
	return &p.Items[0], nil
}

// ChatContext is what an agent rehydrates from in one conversation
// (§10.5): everything it sent there, of any kind, and every text message
// that mentions it, oldest first.
func (x *Rooms) ChatContext(ctx context.Context, c *hub.Caller, conversationID string, pg hub.Paging) (*hub.MessagePage, error) {
	offset, size, err := hub.ContextPage.Window(pg)
	if err != nil {
		return nil, err
	}
	v, err := x.hub.Room(ctx, c, conversationID)
	if err != nil {
		return nil, err
	}
	msgs, total, err := x.store.ChatContext(ctx, v.Conversation.ID, c.Agent.ID, c.Agent.Handle(), offset, size)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return &hub.MessagePage{Messages: msgs, Total: total, More: offset+len(msgs) < total}, nil
}

// conversationsPaged lists the conversations principal id takes part in, most
// recently active first, a page by number: for agents the rooms profile's
// list of rooms, for people the rooms they are in.
func (x *Rooms) conversationsPaged(ctx context.Context, principalID string, pg hub.Paging) ([]hub.ConversationListing, bool, error) {
	offset, size, err := hub.RoomPage.Window(pg)
	if err != nil {
		return nil, false, err
	}
	var convs []*hub.Conversation
	before, beforeID := time.Time{}, ""
	for len(convs) <= offset+size {
		batch, err := x.store.ConversationsOf(ctx, principalID, before, beforeID, hub.ConversationsPage.Max)
		if err != nil {
			return nil, false, hub.AsError(err)
		}
		convs = append(convs, batch...)
		if len(batch) < hub.ConversationsPage.Max {
			break
		}
		last := batch[len(batch)-1]
		before, beforeID = last.UpdatedAt, last.ID
	}
	more := len(convs) > offset+size
	convs = convs[min(offset, len(convs)):min(offset+size, len(convs))]
	ls, err := x.hub.Listings(ctx, convs, principalID)
	return ls, more, err
}

// Rooms lists the conversations the agent takes part in, a page by number.
func (x *Rooms) Rooms(ctx context.Context, c *hub.Caller, pg hub.Paging) ([]hub.ConversationListing, bool, error) {
	return x.conversationsPaged(ctx, c.Agent.ID, pg)
}

// PersonRooms lists the conversations the person takes part in, a page by
// number.
func (x *Rooms) PersonRooms(ctx context.Context, u *hub.User, pg hub.Paging) ([]hub.ConversationListing, bool, error) {
	return x.conversationsPaged(ctx, u.ID, pg)
}

// RoomMessages is a page of a conversation's history as a person reads it
// (§10.5): oldest first, only messages of one kind when kind is given, only
// those sent after since when it is not zero. Reading moves the person's
// place where they take part.
func (x *Rooms) RoomMessages(ctx context.Context, u *hub.User, conversationID, kind string, since time.Time, pg hub.Paging) (*hub.MessagePage, error) {
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind != "" && kind != hub.MessageText && !slices.Contains(hub.EventPostKinds, kind) {
		return nil, hub.Invalid("", "message_type must be \"text\" or one of %s (got %q)", strings.Join(hub.EventPostKinds, ", "), hub.Echo(kind))
	}
	offset, size, err := hub.RoomPage.Window(pg)
	if err != nil {
		return nil, err
	}
	v, err := x.hub.PersonRoom(ctx, u, conversationID)
	if err != nil {
		return nil, err
	}
	msgs, total, err := x.store.MessagesWhere(ctx, v.Conversation.ID, kind, since, offset, size)
	if err != nil {
		return nil, hub.AsError(err)
	}
	if err := x.hub.PersonRead(ctx, u, v, &hub.ReadResult{Messages: msgs}); err != nil {
		return nil, err
	}
	return &hub.MessagePage{Messages: msgs, Total: total, More: offset+len(msgs) < total}, nil
}
