package overview

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// The Bridge (§11): the page an owner keeps open — what every one of their
// agents does as it happens, what waits for them, and which sessions of
// each agent are about. Activity is read from the person's own event
// stream, so the page and its live rows (the same events, after the page's
// cursor) never miss or repeat one.

// Kinds of Bridge activity.
const (
	ActivitySent       = "sent"       // an agent's message was delivered
	ActivityHeld       = "held"       // an agent's message is held for the owner (§7 review)
	ActivityBrake      = "brake"      // a brake refused an agent's send (§7)
	ActivityQuestion   = "question"   // an agent asks its owner (§9)
	ActivityPaused     = "paused"     // a conversation was paused (§7)
	ActivityClaimed    = "claimed"    // a session took a conversation (§5)
	ActivityWebhook    = "webhook"    // an agent's webhook failed for a day and was disabled (§18)
	ActivityPermission = "permission" // a session asks its owner to let it use a tool (§19)
)

// activityTypes are the events the Bridge shows. message.new counts only
// for the person's own agents' words.
var activityTypes = []string{hub.EventAgentSent, hub.EventMessageNew, hub.EventMessagePending, hub.EventBrakeTripped,
	hub.EventQuestionAsked, hub.EventConversationPaused, hub.EventClaimed, hub.EventWebhookDisabled, hub.EventPermissionRequest}

// Activity is one row of the Bridge.
type Activity struct {
	ID             int64  // the event's id: the row's identity
	Kind           string // one of the Activity kinds
	Agent          string // the agent's handle ("" for a pause)
	Instance       string // the session, when it named itself
	ConversationID string
	// Conversation names the conversation: its title, or its
	// participants' handles.
	Conversation string
	// Text is what happened in words: a message's summary line, the
	// question, the brake's or the pause's reason.
	Text       string
	Brake      string       // the brake's word (ActivityBrake)
	Message    *hub.Message // sent and held messages
	QuestionID string
	// PermissionID is the permission request asked (ActivityPermission).
	PermissionID string
	At           time.Time
}

// BridgeInstance is a session of an agent seen lately, with the last thing
// it did that the Bridge shows (nil when that is not among its rows).
type BridgeInstance struct {
	hub.Instance
	Last     *Activity
	Presence string // the session's presence now (§19)
}

// BridgeAgent is one of the person's agents with its sessions seen in the
// last InstanceWindow, latest first.
type BridgeAgent struct {
	Agent     *hub.Agent
	Instances []BridgeInstance
	Presence  hub.AgentPresence // §19
}

// WaitingCount is how many approvals of one kind wait.
type WaitingCount struct {
	Kind  string
	Count int
}

// Bridge is the Bridge page: the latest activity (newest first), what
// waits under Approvals (with a count per kind, in Approvals' order), the
// paused conversations, the agents and their sessions, the remote A2A
// agents with their calls (how many wait, the latest delivery and its
// problem), and the cursor after which the page's live rows begin.
type Bridge struct {
	Activity  []Activity
	Approvals []hub.Approval
	Waiting   []WaitingCount
	Paused    []PausedConversation
	Agents    []BridgeAgent
	Remotes   []*hub.RemoteAgent
	Cursor    string
}

// BridgeRows is how many rows of activity the Bridge shows.
const BridgeRows = 50

// InstanceWindow is how recently a session must have been seen to be
// listed under its agent on the Bridge.
const InstanceWindow = time.Hour

// Bridge reads the person's Bridge. Its Cursor is where the page's event
// stream starts: every activity event up to it is in Activity (the latest
// BridgeRows), every one after it comes live.
func (o *Overview) Bridge(ctx context.Context, u *hub.User) (*Bridge, error) {
	latest, err := o.hub.LatestEvent(ctx)
	if err != nil {
		return nil, err
	}
	b := &Bridge{Cursor: o.hub.CursorAt(u.ID, latest)}
	events, err := o.store.RecentEvents(ctx, u.ID, latest, activityTypes, BridgeRows)
	if err != nil {
		return nil, hub.AsError(err)
	}
	if b.Activity, err = o.BridgeActivity(ctx, u, events); err != nil {
		return nil, err
	}
	if b.Approvals, err = o.hub.Approvals(ctx, u); err != nil {
		return nil, err
	}
	for _, a := range b.Approvals {
		found := false
		for i := range b.Waiting {
			if b.Waiting[i].Kind == a.Kind {
				b.Waiting[i].Count++
				found = true
			}
		}
		if !found {
			b.Waiting = append(b.Waiting, WaitingCount{Kind: a.Kind, Count: 1})
		}
	}
	paused, err := o.store.PausedConversations(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, c := range paused {
		v, err := o.store.ConversationView(ctx, c.ID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		b.Paused = append(b.Paused, PausedConversation{Conversation: c, Name: conversationName(v)})
	}
	if b.Remotes, err = o.store.RemoteAgents(ctx, u.ID); err != nil {
		return nil, hub.AsError(err)
	}
	agents, err := o.store.Agents(ctx, u.ID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	presence, err := o.hub.Presences(ctx, agents)
	if err != nil {
		return nil, err
	}
	since := o.hub.Now().Add(-InstanceWindow)
	for _, a := range agents {
		ba := BridgeAgent{Agent: a, Presence: presence[a.ID]}
		is, err := o.store.Instances(ctx, a.ID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		for _, in := range is {
			if in.LastSeen.Before(since) {
				continue
			}
			bi := BridgeInstance{Instance: in, Presence: ba.Presence.Session(in.Name).State}
			for i, act := range b.Activity {
				if act.Agent == a.Handle() && act.Instance == in.Name {
					bi.Last = &b.Activity[i]
					break
				}
			}
			ba.Instances = append(ba.Instances, bi)
		}
		b.Agents = append(b.Agents, ba)
	}
	return b, nil
}

// BridgeActivity turns the person's events into Bridge rows, in the
// events' order, leaving out those that are not activity of their agents
// (a message.new of someone else's words, an approval decided, …). The
// event stream of a Bridge page passes each wait's events through it.
func (o *Overview) BridgeActivity(ctx context.Context, u *hub.User, events []*hub.Event) ([]Activity, error) {
	names := map[string]string{}
	var out []Activity
	for _, e := range events {
		a := Activity{ID: e.ID, ConversationID: e.ConversationID, At: e.CreatedAt}
		var d struct {
			Agent, Instance, Question, Brake, Reason, Description string
			QuestionID                                            string `json:"question_id"`
			PermissionID                                          string `json:"permission_id"`
			ToolName                                              string `json:"tool_name"`
		}
		if len(e.Data) > 0 {
			json.Unmarshal(e.Data, &d)
		}
		switch e.Type {
		case hub.EventAgentSent, hub.EventMessageNew, hub.EventMessagePending:
			m := e.Message
			if m == nil || m.SenderKind != hub.PrincipalAgent || m.OwnerID != u.ID {
				continue
			}
			a.Kind, a.Message, a.Agent, a.Instance, a.Text = ActivitySent, m, m.SenderHandle, m.SenderInstance, m.SummaryLine()
			if e.Type == hub.EventMessagePending {
				a.Kind = ActivityHeld
			}
		case hub.EventBrakeTripped:
			if d.Brake == hub.BrakePaused.Word {
				continue // the pause has its own row, conversation.paused
			}
			a.Kind, a.Agent, a.Instance, a.Brake, a.Text = ActivityBrake, d.Agent, d.Instance, d.Brake, d.Reason
		case hub.EventQuestionAsked:
			a.Kind, a.Agent, a.Instance, a.Text, a.QuestionID = ActivityQuestion, d.Agent, d.Instance, d.Question, d.QuestionID
		case hub.EventConversationPaused:
			a.Kind, a.Text = ActivityPaused, d.Reason
		case hub.EventClaimed:
			a.Kind, a.Agent, a.Instance = ActivityClaimed, d.Agent, d.Instance
		case hub.EventWebhookDisabled:
			a.Kind, a.Agent, a.Text = ActivityWebhook, d.Agent, d.Reason
		case hub.EventPermissionRequest:
			a.Kind, a.Agent, a.Instance, a.PermissionID = ActivityPermission, d.Agent, d.Instance, d.PermissionID
			a.Text = d.ToolName
			if d.Description != "" {
				a.Text += ": " + hub.Preview(d.Description, hub.MaxSummary)
			}
		default:
			continue
		}
		if id := e.ConversationID; id != "" {
			name, ok := names[id]
			if !ok {
				v, err := o.store.ConversationView(ctx, id)
				if err == nil {
					name = conversationName(v)
				} else if !errors.Is(err, hub.ErrNoRows) {
					return nil, hub.AsError(err)
				}
				names[id] = name
			}
			a.Conversation = name
		}
		out = append(out, a)
	}
	return out, nil
}

// PausedConversation is a paused conversation on the Bridge, with the
// name it goes by: its title, or its participants.
type PausedConversation struct {
	*hub.Conversation
	Name string
}

// conversationName is a conversation's title, or its participants'
// handles when it has none.
func conversationName(v *hub.ConversationView) string {
	if v.Conversation.Title != "" {
		return v.Conversation.Title
	}
	hs := make([]string, 0, len(v.Participants))
	for _, p := range v.Participants {
		hs = append(hs, p.Handle)
	}
	return strings.Join(hs, ", ")
}
