package hub

import (
	"context"
	"errors"
	"time"
)

// InboxResult is check_inbox's answer (§5): every waiting message, oldest
// first, never collapsed per conversation.
type InboxResult struct {
	Total int
	Items []InboxItem
	// More is how many wait beyond the ones returned.
	More int
	// Answers are the owner's answers to the agent's questions (the
	// session's own, with a session name) not yet acknowledged (§9).
	Answers []*Question
}

// Inbox lists the caller's waiting (unacknowledged) messages, oldest first
// — attempts that are stuck first of all —, at most limit (1–50, default
// 20). Listing marks nothing read. With a
// session name it lists only what waits for that session (§5): not
// addressed to another session, not in a conversation another live session
// holds, plus its sibling sessions' words in shared conversations past its
// place.
func (h *Hub) Inbox(ctx context.Context, c *Caller, limit int, instance string) (*InboxResult, error) {
	limit, err := InboxPage.check(limit)
	if err != nil {
		return nil, err
	}
	instance, err = h.seeInstance(ctx, c, instance)
	if err != nil {
		return nil, err
	}
	f := SessionFilter{Instance: instance, LiveSince: h.liveSince(), StuckSince: h.now().Add(-h.settings.StuckAfter)}
	items, total, err := h.store.Inbox(ctx, c.Agent.ID, f, limit)
	if err != nil {
		return nil, AsError(err)
	}
	r := &InboxResult{Total: total, Items: items, More: total - len(items)}
	if r.Answers, err = h.store.Answers(ctx, c.Agent.ID, instance); err != nil {
		return nil, AsError(err)
	}
	if instance != "" {
		if err := h.sessionInbox(ctx, c, instance, r, limit); err != nil {
			return nil, AsError(err)
		}
	}
	return r, nil
}

// Acknowledge outcomes (§5).
const (
	OutcomeDone       = "done"
	OutcomeFailed     = "failed"
	OutcomeProcessing = "processing"
)

// Acknowledge records what the caller did with a message delivered to it
// (§5): processing starts attempt n (n counting every attempt so far);
// failed ends the attempt with its error and leaves the message waiting,
// to be retried; done takes it out of the inbox for every session of the
// agent. Acknowledging a message already done again is not an error; a
// new attempt at one is refused.
func (h *Hub) Acknowledge(ctx context.Context, c *Caller, messageID, outcome, errText string) (*Delivery, error) {
	return h.acknowledge(ctx, c, messageID, outcome, errText, ackRules{})
}

// ackRules narrow an acknowledgement: to a message of one conversation,
// and to finishing only an attempt that is running (§10.5).
type ackRules struct {
	conversationID string // "": any conversation
	needAttempt    bool
}

func (h *Hub) acknowledge(ctx context.Context, c *Caller, messageID, outcome, errText string, rules ackRules) (*Delivery, error) {
	switch outcome {
	case "":
		outcome = OutcomeDone
	case OutcomeDone, OutcomeFailed, OutcomeProcessing:
	default:
		return nil, invalid("", "outcome must be \"done\", \"failed\" or \"processing\" (got %q)", echo(outcome))
	}
	if messageID == "" {
		return nil, errNoMessageID
	}
	if idKind(messageID) == IDQuestion {
		if outcome != OutcomeDone {
			return nil, invalid("", "an owner's answer is acknowledged with outcome done (the default); processing and failed are for messages")
		}
		d, err := h.acknowledgeAnswer(ctx, c, messageID)
		if err == nil {
			h.inboxChanged(c.Agent.ID)
		}
		return d, err
	}
	errText, err := checkText("error", errText, 0, MaxErrorText)
	if err != nil {
		return nil, err
	}
	if errText != "" && outcome != OutcomeFailed {
		return nil, invalid("", "error goes with outcome \"failed\"; leave it out otherwise")
	}
	missing := notFound("no message %q was delivered to you; message ids come from {check_inbox}", echo(messageID))
	var d *Delivery
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		m, err := tx.Message(ctx, messageID)
		if errors.Is(err, ErrNoRows) || (err == nil && rules.conversationID != "" && m.ConversationID != rules.conversationID) {
			return nil, missing
		}
		if err != nil {
			return nil, err
		}
		// The conversation's lock makes two sessions' attempts take turns.
		if _, err := lockedAccess(ctx, tx, c.Agent.ID, m.ConversationID); err != nil {
			if AsError(err).Kind == KindNotFound {
				return nil, missing
			}
			return nil, err
		}
		d, err = tx.Delivery(ctx, c.Agent.ID, messageID)
		switch {
		case errors.Is(err, ErrNoRows) && m.SenderID == c.Agent.ID:
			return nil, invalid("", "this is your agent's own message (from another session); nothing to acknowledge — it leaves a session's inbox when that session reads past it with {read_messages} and its instance")
		case errors.Is(err, ErrNoRows):
			return nil, missing
		case err != nil:
			return nil, err
		}
		if rules.needAttempt && outcome != OutcomeProcessing && (d.State == DeliveryDone || d.State == DeliveryWithdrawn) {
			return nil, invalid("no_attempt", "message %s is processed already, so no processing attempt is running to finish; nothing is left to do on it ({check_inbox} lists what still waits)", d.MessageID)
		}
		if rules.needAttempt && outcome != OutcomeProcessing && d.State != DeliveryProcessing {
			return nil, invalid("no_attempt", "finishing message %s needs a running processing attempt, and none is running: start one first ({acknowledge with outcome processing}), work on it, then finish it", d.MessageID)
		}
		if d.State == DeliveryDone || d.State == DeliveryWithdrawn {
			if outcome == OutcomeDone {
				return nil, nil
			}
			return nil, invalid("", "this message is acknowledged done already; there is nothing left to process")
		}
		now := h.now()
		switch outcome {
		case OutcomeProcessing:
			d.State, d.Attempts, d.StartedAt = DeliveryProcessing, d.Attempts+1, now
		case OutcomeFailed:
			if d.State != DeliveryProcessing {
				d.Attempts++ // an attempt that was not announced
			}
			d.State, d.Error, d.StartedAt = DeliveryFailed, errText, time.Time{}
		default:
			d.State, d.StartedAt, d.AckedAt = DeliveryDone, time.Time{}, now
		}
		if err := tx.SetDeliveryState(ctx, d); err != nil {
			return nil, err
		}
		// An A2A caller follows its task by this change (§18).
		return taskChanged(ctx, tx, d.MessageID, now)
	})
	if err != nil {
		return nil, err
	}
	h.inboxChanged(c.Agent.ID) // a stream following the inbox hears of it (§19)
	return d, nil
}

// Stuck reports whether the delivery's attempt has run longer than
// Settings.StuckAfter: its agent went quiet, and it comes back first (§5).
func (h *Hub) Stuck(d *Delivery) bool {
	return d.State == DeliveryProcessing && !d.StartedAt.After(h.now().Add(-h.settings.StuckAfter))
}

// deliver hands a stored, sequenced message to the conversation (§5): the
// deliveries and events Deliveries says, the speaking session takes the
// hold unless another live session has it (speakerHolds), and the
// sender's place moves past its own words. It returns the events to
// publish.
func deliver(ctx context.Context, tx Tx, v *ConversationView, m *Message, now time.Time) ([]*Event, error) {
	agents, events := Deliveries(v, m, now)
	if err := tx.InsertDeliveries(ctx, m, agents); err != nil {
		return nil, err
	}
	if err := senderSpeaks(ctx, tx, m, now); err != nil {
		return nil, err
	}
	if err := tx.MoveRead(ctx, m.ConversationID, m.SenderID, m.SenderInstance, m.Seq, true, now); err != nil {
		return nil, err
	}
	return events, nil
}

// senderSpeaks gives the hold to the session that sent m, unless another
// live session has it (speakerHolds); a person's words, or an agent's
// without a session, take none.
func senderSpeaks(ctx context.Context, tx Tx, m *Message, now time.Time) error {
	if m.SenderKind != PrincipalAgent || m.SenderInstance == "" {
		return nil
	}
	return speakerHolds(ctx, tx, m.SenderID, m.ConversationID, m.SenderInstance, now)
}

// NewMessage is what a new sent message writes (§5), decided here and
// handed to the store in one call, Tx.AppendMessage, which writes it in as
// few statements as its database allows: Message takes the conversation's
// next seq (NextSeq, at At) and is stored (InsertMessage); a waiting
// delivery of it goes to each of Agents (InsertDeliveries); its sender's
// place (the sender's instance) moves forward to its seq (MoveRead); and
// Events are stored after it (InsertEvents), in order, their positions
// set.
type NewMessage struct {
	Message *Message
	At      time.Time
	Agents  []string
	Events  []*Event
}

// deliverNew is deliver for a new message not stored yet: it stores it as
// the conversation's next seq and hands it to the conversation in one
// write with its events, those Deliveries says and then extra. It returns
// them all, stored (update stores no event twice).
func deliverNew(ctx context.Context, tx Tx, v *ConversationView, m *Message, now time.Time, extra []*Event) ([]*Event, error) {
	agents, events := Deliveries(v, m, now)
	events = append(events, extra...)
	if err := senderSpeaks(ctx, tx, m, now); err != nil {
		return nil, err
	}
	if err := tx.AppendMessage(ctx, &NewMessage{Message: m, At: now, Agents: agents, Events: events}); err != nil {
		return nil, err
	}
	return events, nil
}

// Deliveries is what a stored, sequenced message makes in its
// conversation v (§5), without writing it: the agents it is delivered to
// (every other agent participant; event posts: only those mentioned), and
// its events — a message.new for each participant it reaches, the
// sender's own stream too so sibling sessions hear it (a person who wrote
// in without taking part too, so their other pages do), and agent.sent to
// an agent's owner whom no message.new tells. deliver writes them; a
// history written straight through the store (palaver bench) writes the
// same.
func Deliveries(v *ConversationView, m *Message, now time.Time) (agents []string, events []*Event) {
	toldOwner, toldSender := m.SenderKind != PrincipalAgent, false
	for _, p := range v.Participants {
		if p.Archived {
			continue
		}
		if !reaches(v, m, &p) {
			continue
		}
		if p.Kind == PrincipalAgent && p.PrincipalID != m.SenderID {
			agents = append(agents, p.PrincipalID)
		}
		events = append(events, &Event{RecipientID: p.PrincipalID, Type: EventMessageNew,
			ConversationID: m.ConversationID, MessageID: m.ID, CreatedAt: now, Message: m})
		toldOwner = toldOwner || p.PrincipalID == m.OwnerID
		toldSender = toldSender || p.PrincipalID == m.SenderID
	}
	if !toldSender && m.SenderKind == PrincipalUser {
		events = append(events, &Event{RecipientID: m.SenderID, Type: EventMessageNew,
			ConversationID: m.ConversationID, MessageID: m.ID, CreatedAt: now, Message: m})
	}
	if !toldOwner {
		// The owner sees all of its agents' words (§3), on the Bridge as
		// they are sent; one told of them as message.new has them already.
		events = append(events, &Event{RecipientID: m.OwnerID, Type: EventAgentSent,
			ConversationID: m.ConversationID, MessageID: m.ID, CreatedAt: now})
	}
	return agents, events
}

// DeliveryReads are the queries of deliveries (Reader embeds them).
type DeliveryReads interface {
	Delivery(ctx context.Context, agentID, messageID string) (*Delivery, error)
	// Inbox returns the agent's oldest limit waiting (unacknowledged)
	// deliveries in open conversations, with their messages and live holders,
	// and how many wait in all. With f.Instance it keeps only those waiting
	// for that session (§5): addressed to it or to nobody, and then not in a
	// conversation held by another session seen since f.LiveSince.
	Inbox(ctx context.Context, agentID string, f SessionFilter, limit int) (items []InboxItem, total int, err error)
	// SiblingWords returns the agent's own messages written by its other
	// named sessions in open group and thread conversations since the
	// session was first seen and past its place (oldest first, at most
	// limit), and how many there are (§5).
	SiblingWords(ctx context.Context, agentID, instance string, limit int) ([]*Message, int, error)
}

// DeliveryWrites are the writes of deliveries (Tx embeds them).
type DeliveryWrites interface {
	// AppendMessage writes a new sent message and what it makes, as
	// NewMessage says: m.Seq and the events' positions are set. A
	// conversation that is not there is ErrNoRows; a client_msg_id used
	// before, ErrDuplicate.
	AppendMessage(ctx context.Context, n *NewMessage) error
	// InsertDeliveries creates a waiting delivery of m for each agent.
	InsertDeliveries(ctx context.Context, m *Message, agentIDs []string) error
	// MarkFetched records the first body read of the agent's deliveries.
	MarkFetched(ctx context.Context, agentID string, messageIDs []string, at time.Time) error
	// UnmarkFetched forgets the body reads of the agent's waiting
	// deliveries in the conversation from seq fromSeq on.
	UnmarkFetched(ctx context.Context, agentID, conversationID string, fromSeq int64) error
	// WithdrawDeliveries takes the agent's waiting deliveries in a
	// conversation out of its inbox (state withdrawn) and returns their
	// message ids, sorted.
	WithdrawDeliveries(ctx context.Context, agentID, conversationID string, at time.Time) ([]string, error)
	// SetDeliveryState stores a delivery's processing state (§5): its
	// state, attempts, error, and when its attempt started and when it was
	// acknowledged.
	SetDeliveryState(ctx context.Context, d *Delivery) error
}
