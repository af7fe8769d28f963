package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Brakes (§7): an agent's send is refused — never queued, never retried by
// the server — with a reason whose first word names the brake. People are
// never slowed. "A person taking part" is a person speaking, approving a held
// message or pressing Resume; it starts the counts again.

// A Brake is one row of §7's table, declared once: the word that starts its
// refusals and labels its metric, when it trips and what lifts it (for the
// tool descriptions, the metric's help and the docs), the tunable that sets
// its threshold ("" for none), and its check. A brake without a check is
// met where the send learns its cause (listen: the agent's mode; closing:
// the conversation's status; notice: the message replied to).
type Brake struct {
	Word    string
	Trips   string
	Lifted  string
	Setting *Tunable // nil: none
	check   func(b Brake, h *Hub, s *sending) error
}

// BrakeSettings are the brakes' thresholds, a part of Settings.
type BrakeSettings struct {
	PauseTurns     int           // agent turns with no person that pause a conversation
	DuplicateLimit int           // sends of the same words since a person took part
	Budget         int           // sends per agent per conversation per BudgetWindow
	BudgetWindow   time.Duration //
	LoopTurns      int           // turns in a thread within LoopWindow that make a loop
	LoopVoiceTurns int           // turns a voice must take to count as a party to it
	LoopWindow     time.Duration //
}

// defaultBrakeSettings are §7's numbers.
func defaultBrakeSettings() BrakeSettings {
	return BrakeSettings{PauseTurns: 50, DuplicateLimit: 2, Budget: 60, BudgetWindow: time.Hour,
		LoopTurns: 30, LoopVoiceTurns: 3, LoopWindow: 2 * time.Hour}
}

// brakeTunables are the brakes' settings, for Tunables.
func brakeTunables() []Tunable {
	var ts []Tunable
	for _, b := range Brakes {
		if b.Setting != nil {
			ts = append(ts, *b.Setting)
		}
	}
	return ts
}

// The brakes.
var (
	BrakeListen  = Brake{Word: "listen", Trips: "the agent's mode, or its access in the project, is listen", Lifted: "the owner"}
	BrakeClosing = Brake{Word: "closing", Trips: "a close of the conversation is pending", Lifted: "the owner"}
	BrakeNotice  = Brake{Word: "notice", Trips: "reply_to_seq points at a message sent with no_reply", Lifted: "nothing: acknowledge a notice instead"}
	BrakePaused  = Brake{Word: "paused", Trips: "agents traded pause-turns turns in the conversation with no person taking part (a turn is a change of voice)",
		Lifted: "a person pressing Resume or writing in it", check: checkPaused,
		Setting: &Tunable{Name: "pause-turns", Usage: "brake: agent turns with no person that pause a conversation", Int: func(s *Settings) *int { return &s.PauseTurns }}}
	BrakeDuplicate = Brake{Word: "duplicate", Trips: "the agent already sent these exact words duplicate-limit times in the conversation since a person last took part",
		Lifted: "a person taking part", check: checkDuplicate,
		Setting: &Tunable{Name: "duplicate-limit", Usage: "brake: copies of the same words an agent may send since a person took part", Int: func(s *Settings) *int { return &s.DuplicateLimit }}}
	BrakeBudget = Brake{Word: "budget", Trips: "the agent sent budget messages in the conversation in the last hour",
		Lifted: "time", check: checkBudget,
		Setting: &Tunable{Name: "budget", Usage: "brake: messages per agent per conversation per hour", Int: func(s *Settings) *int { return &s.Budget }}}
	BrakeLoop = Brake{Word: "loop", Trips: "in a project thread over two hours with no person, loop-turns turns, two voices with three turns or more, two of them the agent's own sessions",
		Lifted: "a person taking part, or time", check: checkLoop,
		Setting: &Tunable{Name: "loop-turns", Usage: "brake: turns in a project thread within two hours that make a loop", Int: func(s *Settings) *int { return &s.LoopTurns }}}
)

// Brakes lists every brake, as §7 does; a send meets those with a check in
// this order.
var Brakes = []Brake{BrakePaused, BrakeNotice, BrakeDuplicate, BrakeBudget, BrakeLoop, BrakeListen, BrakeClosing}

// BrakeWords are the brakes' words, in Brakes' order.
func BrakeWords() []string {
	words := make([]string, len(Brakes))
	for i, b := range Brakes {
		words[i] = b.Word
	}
	return words
}

// deny refuses a send for b, the reason's first word b's.
func (b Brake) deny(format string, args ...any) *Refusal { return deny(b.Word, format, args...) }

// sending is what the brakes' checks look at: the send, and the counts
// two of them share, read with the conversation (Tx.SendView).
type sending struct {
	ctx    context.Context
	tx     Tx
	conv   *Conversation
	c      *Caller
	body   string
	now    time.Time
	counts SentCounts
}

// SentQuery asks a conversation's read (Tx.SendView) for the counts the
// duplicate and budget brakes look at, with it: the sender's messages
// (sent or held) of Body since the conversation's LastPersonAt, and all
// of them since RecentSince, each count stopping at Max, so a brake's
// check costs the same however long the history.
type SentQuery struct {
	SenderID    string
	Body        string
	RecentSince time.Time
	Max         int
}

// SentCounts are a SentQuery's counts.
type SentCounts struct{ Same, Recent int }

// sentQuery is what lockedSendAccess asks for the agent's send of body
// into a conversation: the duplicate brake's count since a person last
// took part and the budget's over its window, ending now (the send's
// transaction holds the conversation, so nothing the agent sends there
// comes between that read and the brakes' checks).
func (h *Hub) sentQuery(agentID, body string, now time.Time) SentQuery {
	set := h.settings
	return SentQuery{SenderID: agentID, Body: body, RecentSince: now.Add(-set.BudgetWindow), Max: max(set.DuplicateLimit, set.Budget)}
}

// lockedSendAccess is lockedAccess for the agent's send of q.Body,
// reading with the conversation the counts of q.
func lockedSendAccess(ctx context.Context, tx Tx, conversationID string, q SentQuery) (*ConversationView, SentCounts, error) {
	var counts SentCounts
	v, err := lockedAccessBy(ctx, tx, q.SenderID, conversationID, func() (v *ConversationView, err error) {
		v, counts, err = tx.SendView(ctx, conversationID, q)
		return v, err
	})
	return v, counts, err
}

// brake decides whether the agent may send body into conv now: each brake
// with a check, in order. It runs in the send's transaction, after the
// checks of the message itself. Held messages count toward duplicate and
// budget like sent ones.
func (h *Hub) brake(ctx context.Context, tx Tx, conv *Conversation, c *Caller, body string, now time.Time, counts SentCounts) error {
	s := &sending{ctx: ctx, tx: tx, conv: conv, c: c, body: body, now: now, counts: counts}
	for _, b := range Brakes {
		if b.check == nil {
			continue
		}
		if err := b.check(b, h, s); err != nil {
			return err
		}
	}
	return nil
}

func checkPaused(b Brake, h *Hub, s *sending) error {
	if s.conv.PausedAt.IsZero() {
		return nil
	}
	return b.deny("agents traded %d turns in this {conversation} with no person taking part, so it is paused until a person writes in it or presses Resume; stop here and tell your owner", h.settings.PauseTurns)
}

func checkDuplicate(b Brake, h *Hub, s *sending) error {
	same := s.counts.Same
	if same < h.settings.DuplicateLimit {
		return nil
	}
	return b.deny("you already sent these exact words %d times in this {conversation} since a person last took part; say something new, or wait for a person", same)
}

func checkBudget(b Brake, h *Hub, s *sending) error {
	recent := s.counts.Recent
	if recent < h.settings.Budget {
		return nil
	}
	return b.deny("you sent %d messages in this {conversation} in the last %s, the limit; wait before sending more here", recent, span(h.settings.BudgetWindow))
}

// checkLoop stops an agent whose own sessions answer each other in a
// thread (§7 loop): over the window with no person, at least LoopTurns
// turns (voice = agent + session), at least two voices with LoopVoiceTurns
// turns or more, and two of those voices the sender's. Only this agent is
// stopped.
func checkLoop(b Brake, h *Hub, s *sending) error {
	if s.conv.Kind != KindThread {
		return nil
	}
	set := h.settings
	from := s.now.Add(-set.LoopWindow)
	if s.conv.LastPersonAt.After(from) {
		from = s.conv.LastPersonAt
	}
	voices, err := s.tx.Voices(s.ctx, s.conv.ID, from)
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
	if turns < set.LoopTurns {
		return nil
	}
	busy, own := 0, 0
	for v, n := range perVoice {
		if n < set.LoopVoiceTurns {
			continue
		}
		busy++
		if strings.HasPrefix(v, s.c.Agent.ID+"/") {
			own++
		}
	}
	if busy >= 2 && own >= 2 {
		return b.deny("your own sessions have been answering each other in this thread (%d turns in the last %s with no person); only your agent is stopped — stop here and tell your owner: it lifts when a person takes part, or as the turns age out of the %s", turns, span(set.LoopWindow), span(set.LoopWindow))
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

// BrakeReads are the queries of brakes (Reader embeds them).
type BrakeReads interface {
	// SendView is ConversationView and, in the same read where the
	// database allows, the counts q asks for.
	SendView(ctx context.Context, conversationID string, q SentQuery) (*ConversationView, SentCounts, error)
	// Voices lists the voices (sender id + "/" + instance) of the agent
	// messages sent in a conversation after since, in seq order.
	Voices(ctx context.Context, conversationID string, since time.Time) ([]string, error)
}

// BrakeWrites are the writes of brakes (Tx embeds them).
type BrakeWrites interface {
	// SetBrakeState records a conversation's turn count, last voice and
	// pause (zero pausedAt: not paused).
	SetBrakeState(ctx context.Context, c *Conversation) error
	// TouchPerson records that a person took part at: turns start again and
	// any pause is lifted.
	TouchPerson(ctx context.Context, conversationID string, at time.Time) error
}
