package hub

import (
	"context"
	"errors"
	"slices"
)

// How the hub writes: every change is one store transaction; the events
// it makes are stored in that transaction and published after it commits.

// update runs fn in a write transaction, stores the events fn returns in
// the same transaction (those fn has not stored with a message, with
// Tx.AppendMessage) with the webhook calls they make, and once it
// committed wakes their recipients: every event of the hub is stored in
// an update's transaction and published here, nowhere else. Refusals and
// Errors pass through; any other failure becomes an internal Error. When fn
// returns a commitThen, what fn wrote and the events it returned are
// committed, and the commitThen's error is returned after. A store may run
// fn more than once (after a conflict); only the last run's events count.
func (h *Hub) update(ctx context.Context, fn func(tx Tx) ([]*Event, error)) error {
	var events []*Event
	var kept error
	var queued, remoted, noted bool
	err := h.store.Update(ctx, func(tx Tx) error {
		evs, err := fn(tx)
		events, kept, queued, remoted, noted = nil, nil, false, false, false
		var c *commitThen
		if errors.As(err, &c) {
			kept, err = c.err, nil
		}
		if err != nil {
			return err
		}
		events = evs
		if err := tx.InsertEvents(ctx, unstored(evs)); err != nil {
			return err
		}
		// The webhook calls the events make go into the outbox with them
		// (§18): committed together, or not at all.
		if queued, err = h.queueWebhooks(ctx, tx, evs); err != nil {
			return err
		}
		// So do the calls to remote agents the messages make.
		if remoted, err = h.queueRemotes(ctx, tx, evs); err != nil {
			return err
		}
		// And the owner notifications (§19).
		noted, err = h.queueNotifications(ctx, tx, evs)
		return err
	})
	if err != nil {
		return asOutcome(err)
	}
	h.publish(events)
	if queued {
		h.hookKick.Ring()
	}
	if remoted {
		h.remoteKick.Ring()
	}
	if noted {
		h.notifyKick.Ring()
	}
	return kept
}

// unstored are the events fn did not store itself (Tx.AppendMessage
// stores a message's with it): those without a position yet.
func unstored(evs []*Event) []*Event {
	stored := func(e *Event) bool { return e.ID != 0 }
	if !slices.ContainsFunc(evs, stored) {
		return evs
	}
	return slices.DeleteFunc(slices.Clone(evs), stored)
}

// commitThen asks update to commit the transaction's writes and events and
// then return err: a refusal that leaves something behind (an inbound ask).
type commitThen struct{ err error }

func (c *commitThen) Error() string { return c.err.Error() }

// retryDuplicate runs update again once when it failed on a unique
// constraint: two transactions raced to create the same thing (a direct
// conversation, a client_msg_id), and the second run finds the first's.
func retryDuplicate(update func() error) error {
	err := update()
	if errors.Is(err, ErrDuplicate) {
		err = update()
	}
	return err
}

// asOutcome passes Refusals and Errors through and wraps anything else as
// an internal Error.
func asOutcome(err error) error {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	return AsError(err)
}

// publish wakes the waiters of the events' recipients after the commit that
// stored them.
func (h *Hub) publish(events []*Event) {
	if len(events) == 0 {
		return
	}
	ids := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(ids, e.RecipientID) {
			ids = append(ids, e.RecipientID)
		}
	}
	h.commits.published(ids)
	h.waker.Publish(ids)
}
