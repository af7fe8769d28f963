package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Brakes (§7): an agent's send is refused — never queued, never retried by
// the server — with a reason whose first word names the brake. People are
// never slowed. "A person taking part" is a person speaking, approving a held
// message or pressing Resume; it starts the counts again.

// brake decides whether the agent may send body into conv now. It runs in
// the send's transaction, after the checks of the message itself. Held
// messages count toward duplicate and budget like sent ones.
func (h *Hub) brake(ctx context.Context, tx Tx, conv *Conversation, c *Caller, body string, now time.Time) error {
	s := h.settings
	if !conv.PausedAt.IsZero() {
		return deny("paused", "agents traded %d turns in this conversation with no person taking part, so it is paused until a person writes in it or presses Resume; stop here and tell your owner", s.PauseTurns)
	}
	same, recent, err := tx.CountSent(ctx, conv.ID, c.Agent.ID, body, conv.LastPersonAt, now.Add(-s.BudgetWindow), max(s.DuplicateLimit, s.Budget))
	if err != nil {
		return err
	}
	if same >= s.DuplicateLimit {
		return deny("duplicate", "you already sent these exact words %d times in this conversation since a person last took part; say something new, or wait for a person", same)
	}
	if recent >= s.Budget {
		return deny("budget", "you sent %d messages in this conversation in the last %s, the limit; wait before sending more here", recent, span(s.BudgetWindow))
	}
	if conv.Kind == KindThread {
		return h.loopBrake(ctx, tx, conv, c, now)
	}
	return nil
}

// loopBrake stops an agent whose own sessions answer each other in a thread
// (§7 loop): over the window with no person, at least LoopTurns turns (voice
// = agent + session), at least two voices with LoopVoiceTurns turns or more,
// and two of those voices the sender's. Only this agent is stopped.
func (h *Hub) loopBrake(ctx context.Context, tx Tx, conv *Conversation, c *Caller, now time.Time) error {
	s := h.settings
	from := now.Add(-s.LoopWindow)
	if conv.LastPersonAt.After(from) {
		from = conv.LastPersonAt
	}
	voices, err := tx.Voices(ctx, conv.ID, from)
	if err != nil {
		return err
	}
	turns := 0
	perVoice := map[string]int{}
	last := ""
	for _, v := range voices {
		if v != last {
			turns++
			perVoice[v]++
			last = v
		}
	}
	if turns < s.LoopTurns {
		return nil
	}
	busy, own := 0, 0
	for v, n := range perVoice {
		if n < s.LoopVoiceTurns {
			continue
		}
		busy++
		if len(v) > len(c.Agent.ID) && v[:len(c.Agent.ID)+1] == c.Agent.ID+"/" {
			own++
		}
	}
	if busy >= 2 && own >= 2 {
		return deny("loop", "your own sessions have been answering each other in this thread (%d turns in the last %s with no person); only your agent is stopped — stop here and tell your owner: it lifts when a person takes part, or as the turns age out of the %s", turns, span(s.LoopWindow), span(s.LoopWindow))
	}
	return nil
}

// tripped is what a send's transaction returns when a brake (or another
// refusal in it) stops it: a Refusal is committed with brake.tripped for
// the agent's owner, who sees it on the Bridge with the brake's word and
// the conversation (§7, §11); anything else passes through.
func tripped(err error, c *Caller, conversationID, instance string, now time.Time) ([]*Event, error) {
	r, ok := err.(*Refusal)
	if !ok {
		return nil, err
	}
	data, _ := json.Marshal(map[string]string{"brake": r.Word(), "reason": r.Reason, "agent": c.Agent.Handle(), "instance": instance})
	return []*Event{{RecipientID: c.Agent.OwnerID, Type: EventBrakeTripped, ConversationID: conversationID, Data: data, CreatedAt: now}},
		&commitThen{r}
}

// countTurn records an agent's message in the conversation's turn count
// (voice = agent) and pauses the conversation at PauseTurns (§7 paused).
// A pause is told to the people concerned — those taking part and the
// owners of the agents that do — with conversation.paused.
func (h *Hub) countTurn(ctx context.Context, tx Tx, v *ConversationView, agentID string, now time.Time) ([]*Event, error) {
	conv := v.Conversation
	if conv.LastVoice == agentID {
		return nil, nil
	}
	conv.AgentTurns++
	conv.LastVoice = agentID
	var events []*Event
	if conv.AgentTurns >= h.settings.PauseTurns {
		conv.PausedAt = now
		conv.PausedReason = fmt.Sprintf("agents traded %d turns with no person taking part; a person writing in it or pressing Resume lifts the pause", conv.AgentTurns)
		data, _ := json.Marshal(map[string]any{"turns": conv.AgentTurns, "reason": conv.PausedReason})
		told := map[string]bool{}
		for _, p := range v.Participants {
			if !told[p.OwnerID] {
				told[p.OwnerID] = true
				events = append(events, &Event{RecipientID: p.OwnerID, Type: EventConversationPaused, ConversationID: conv.ID, Data: data, CreatedAt: now})
			}
		}
	}
	return events, tx.SetBrakeState(ctx, conv)
}

// personTookPart starts the brakes' counts again and lifts a pause, telling
// the agents with conversation.resumed when there was one. It returns the
// events to publish.
func personTookPart(ctx context.Context, tx Tx, v *ConversationView, now time.Time) ([]*Event, error) {
	if err := tx.TouchPerson(ctx, v.Conversation.ID, now); err != nil {
		return nil, err
	}
	if v.Conversation.PausedAt.IsZero() {
		return nil, nil
	}
	var events []*Event
	for _, p := range v.Participants {
		if p.Kind == PrincipalAgent && !p.Archived {
			events = append(events, &Event{RecipientID: p.PrincipalID, Type: EventConversationResume, ConversationID: v.Conversation.ID, CreatedAt: now})
		}
	}
	return events, nil
}
