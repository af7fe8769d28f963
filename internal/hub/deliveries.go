package hub

import (
	"context"
	"errors"
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

// Inbox lists the caller's waiting (unacknowledged) messages, oldest first,
// at most limit (1–50, default 20). Listing marks nothing read. With a
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
	items, total, err := h.store.Inbox(ctx, c.Agent.ID, SessionFilter{Instance: instance, LiveSince: h.liveSince()}, limit)
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
	OutcomeDone   = "done"
	OutcomeFailed = "failed"
)

// Acknowledge records the caller's answer to a message delivered to it
// (§5): done takes it out of the inbox for every session of the agent;
// failed records the attempt and its error and leaves it waiting.
// Acknowledging a message already done is not an error.
func (h *Hub) Acknowledge(ctx context.Context, c *Caller, messageID, outcome, errText string) (*Delivery, error) {
	switch outcome {
	case "":
		outcome = OutcomeDone
	case OutcomeDone, OutcomeFailed:
	default:
		return nil, invalid("", "outcome must be \"done\" or \"failed\" (got %q)", cleanText(outcome))
	}
	if messageID == "" {
		return nil, errNoMessageID
	}
	if idKind(messageID) == IDQuestion {
		if outcome != "" && outcome != OutcomeDone {
			return nil, invalid("", "an owner's answer is acknowledged with outcome done (the default); outcome failed is for messages")
		}
		return h.acknowledgeAnswer(ctx, c, messageID)
	}
	errText, err := checkText("error", errText, 0, MaxErrorText)
	if err != nil {
		return nil, err
	}
	if errText != "" && outcome != OutcomeFailed {
		return nil, invalid("", "error goes with outcome \"failed\"; leave it out when the outcome is done")
	}
	missing := notFound("no message %q was delivered to you; message ids come from check_inbox", cleanText(messageID))
	var d *Delivery
	err = h.store.Update(ctx, func(tx Tx) error {
		d, err = tx.Delivery(ctx, c.Agent.ID, messageID)
		if errors.Is(err, ErrNoRows) {
			if m, err := tx.Message(ctx, messageID); err == nil && m.SenderID == c.Agent.ID {
				return invalid("", "this is your agent's own message (from another session); nothing to acknowledge — it leaves a session's inbox when that session reads past it with read_messages and its instance")
			}
			return missing
		}
		if err != nil {
			return err
		}
		m, err := tx.Message(ctx, messageID)
		if err != nil {
			return err
		}
		if _, err := access(ctx, tx, c.Agent.ID, m.ConversationID); err != nil {
			return missing
		}
		if d.State == DeliveryDone {
			return nil
		}
		state := DeliveryDone
		if outcome == OutcomeFailed {
			state = DeliveryFailed
		}
		if err := tx.SetDeliveryState(ctx, c.Agent.ID, messageID, state, errText, h.now()); err != nil {
			return err
		}
		d, err = tx.Delivery(ctx, c.Agent.ID, messageID)
		return err
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return d, nil
}
