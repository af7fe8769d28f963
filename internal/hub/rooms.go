package hub

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
)

// Rooms (§10.5): group conversations routed by mention. A text message in a
// room is work — a delivery, an inbox row, a processing state — only for the
// agents it mentions; everyone in the room still sees it in the history, in
// every profile. Managing a room's participants is for its owners and
// admins. An agent works through a room's messages one at a time: the
// oldest not yet processed, a stuck one included, comes next.

// RoomSpec describes a new room.
type RoomSpec struct {
	Title  string // "": the task's title, or "Room"
	TaskID string // an item of a project the creator can see ("": none)
}

// CreateRoom starts a room with the agent as its owner (§10.5), linked to
// a project item when TaskID names one the agent's project holds.
func (h *Hub) CreateRoom(ctx context.Context, c *Caller, s RoomSpec) (*ConversationView, error) {
	return h.createRoom(ctx, s, creatorAgent(c.Agent), func(r Reader, projectID string) error {
		_, _, _, err := agentProject(ctx, r, c.Agent, projectID)
		return err
	})
}

// CreateRoomAsPerson starts a room with the person as its owner.
func (h *Hub) CreateRoomAsPerson(ctx context.Context, u *User, s RoomSpec) (*ConversationView, error) {
	return h.createRoom(ctx, s, creatorPerson(u), func(r Reader, projectID string) error {
		_, err := memberProject(ctx, r, u, projectID)
		return err
	})
}

// createRoom stores a room for creator; seesProject checks that the
// creator can see a task's project.
func (h *Hub) createRoom(ctx context.Context, s RoomSpec, creator Participant, seesProject func(r Reader, projectID string) error) (*ConversationView, error) {
	title, err := checkText("title", strings.TrimSpace(s.Title), 0, MaxTitle)
	if err != nil {
		return nil, err
	}
	var view *ConversationView
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		conv := &Conversation{Kind: KindGroup, Title: title, ByMention: true}
		if s.TaskID != "" {
			missing := notFound("no task %q is in a project you can see; items of your projects are listed by get_project", echo(s.TaskID))
			it, err := tx.Item(ctx, s.TaskID)
			if errors.Is(err, ErrNoRows) {
				return nil, missing
			}
			if err != nil {
				return nil, err
			}
			if err := seesProject(tx, it.ProjectID); err != nil {
				if AsError(err).Kind == KindNotFound {
					return nil, missing
				}
				return nil, err
			}
			conv.ProjectID, conv.ItemID = it.ProjectID, it.ID
			if conv.Title == "" {
				conv.Title = it.Title
			}
		}
		if conv.Title == "" {
			conv.Title = "Room"
		}
		var err error
		view, _, err = h.insertConversation(ctx, tx, creator, conv, nil)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// creatorAgent and creatorPerson are a conversation's creator as its first
// participant.
func creatorAgent(a *Agent) Participant { return participantOf(agentPrincipal(a)) }

func creatorPerson(u *User) Participant {
	return Participant{PrincipalID: u.ID, Kind: PrincipalUser, Handle: u.Handle, OwnerID: u.ID}
}

// bodyMention is an @handle (or @slug) written in a message.
var bodyMention = regexp.MustCompile(`@([a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)?)`)

// mentionsIn finds the participants a body mentions as @handle or @slug,
// each once; words that name no participant are text.
func mentionsIn(ps []Participant, body string) []string {
	var out []string
	for _, m := range bodyMention.FindAllStringSubmatch(strings.ToLower(body), MaxMembers) {
		if p, err := findParticipant(ps, m[1]); err == nil && !slices.Contains(out, p.Handle) {
			out = append(out, p.Handle)
		}
	}
	return out
}

// roomMentions applies a room's rule to a send's mentions (§10.5): a text
// message in a room is work for those it mentions, so it must mention
// someone besides its sender — given, or written in the body as @handle.
func roomMentions(v *ConversationView, senderID, kind, body string, mentions []string) ([]string, error) {
	if !v.Conversation.ByMention || kind != MessageText {
		return mentions, nil
	}
	if len(mentions) == 0 {
		mentions = mentionsIn(v.Participants, body)
	}
	for _, m := range mentions {
		if p, _ := findParticipant(v.Participants, m); p != nil && p.PrincipalID != senderID {
			return mentions, nil
		}
	}
	who := "nobody"
	if len(mentions) > 0 {
		who = "only you"
	}
	example := exampleHandle(v.Participants, senderID)
	if sender, _ := participant(v.Participants, senderID); sender != nil && sender.Kind == PrincipalUser {
		return nil, invalid("mention_required", "in a room a message is work for those it mentions, and this one mentions %s: mention whom it is for, like @%s in the message ({or name them in mentions})", who, example)
	}
	return nil, invalid("mention_required", "in a room a text message is work for those it mentions, and this one mentions %s: mention whom it is for, like @%s in the message ({or name them in mentions}); to report what happened without asking anyone, {send an event post} instead ({kind} tool_call, tool_result, thought, error or task)", who, example)
}

// exampleHandle is the handle of a participant other than the sender to
// show in a message, an agent's first.
func exampleHandle(ps []Participant, senderID string) string {
	example := "alice/planner"
	for _, p := range slices.Backward(ps) {
		if p.PrincipalID != senderID && (p.Kind == PrincipalAgent || example == "alice/planner") {
			example = p.Handle
		}
	}
	return example
}

// ProcessInput is a step of the processing lifecycle on one message of a
// conversation (§5): OutcomeProcessing starts attempt n; OutcomeDone and
// OutcomeFailed finish the attempt running, and need one.
type ProcessInput struct {
	ConversationID string
	MessageID      string
	Outcome        string
	Error          string
}

// Process takes a step of the processing lifecycle (§5, §10.5). Unlike
// acknowledge, finishing needs an attempt: done or failed with none
// running is refused, and says to start one.
func (h *Hub) Process(ctx context.Context, c *Caller, in ProcessInput) (*Delivery, error) {
	if in.Outcome == OutcomeFailed && blank(in.Error) {
		return nil, invalid("", "error is required with failed: say why the attempt failed, in a sentence")
	}
	return h.acknowledge(ctx, c, in.MessageID, in.Outcome, in.Error, ackRules{conversationID: in.ConversationID, needAttempt: true})
}

// MessagePage is a page of messages, oldest first, with how many there are.
type MessagePage struct {
	Messages []*Message
	Total    int
	More     bool
}

// Room is one conversation the agent takes part in, with its participants.
func (h *Hub) Room(ctx context.Context, c *Caller, conversationID string) (*ConversationView, error) {
	return access(ctx, h.store, c.Agent.ID, conversationID)
}

// PersonRoom is one conversation the person may read, with its
// participants.
func (h *Hub) PersonRoom(ctx context.Context, u *User, conversationID string) (*ConversationView, error) {
	v, _, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, asOutcome(err)
	}
	return v, nil
}

// SendAsPerson is a person's message into a conversation (§4), with the
// participants it mentions (§10.5); PostAsPerson is its plain form.
func (h *Hub) SendAsPerson(ctx context.Context, u *User, in SendInput) (*SendResult, error) {
	if in.Kind != "" && in.Kind != MessageText {
		return nil, invalid("", "a person's message is text; event posts report an agent's work")
	}
	return h.postAsPerson(ctx, u, in)
}

// RoomReads are the queries of rooms (Reader embeds them).
type RoomReads interface {
	// Work is a page of the agent's deliveries in one conversation whose
	// state is one of states, oldest first, from offset, with their
	// messages and how many there are in all (§10.5).
	Work(ctx context.Context, agentID, conversationID string, states []string, offset, limit int) ([]InboxItem, int, error)
	// ChatContext is a page of a conversation's sent messages, by seq,
	// from offset, that agentID sent or that are text mentioning handle;
	// with how many there are in all (§10.5).
	ChatContext(ctx context.Context, conversationID, agentID, handle string, offset, limit int) ([]*Message, int, error)
}
