package hub

import (
	"context"
	"time"
)

// Waiting is a wait (Wait, WaitPerson) taken apart at its parkings, for a
// caller that parks it on its own goroutine while everything else it does
// runs elsewhere (§17): a parked wait costs the stack of the goroutine it
// parks on, and that stack keeps the size of the deepest call the
// goroutine made. Step reads (run it with OffStack), Sleep only parks.
// The caller calls Step, then Sleep and Step again until Step reports the
// wait over, then Result, and Close in every case.
type Waiting struct {
	h           *Hub
	ctx         context.Context // ends when the client hangs up or a newer wait of the session starts
	recipientID string
	instance    string // an agent's session: Result tells how each message stands for it
	from        Pos

	release, unlisten, unsubscribe func()

	wake   <-chan struct{}
	timer  *time.Timer
	timeUp <-chan time.Time // nil once the time is up
	held   heldBack

	// What the last look left for the next Sleep, and what it woke to.
	queried int64
	waiting bool // for events held back
	commits <-chan struct{}
	again   <-chan time.Time
	slept   bool
	woke    wakeReason

	done   bool
	result *WaitResult
	err    error
}

// StartWait begins a Wait: it checks the input and the cursor, takes one
// of the agent's waits (too_many_waits past Settings.WaitsPerAgent) and
// subscribes to its stream. It reads: run it with OffStack.
func (h *Hub) StartWait(ctx context.Context, c *Caller, in WaitInput) (*Waiting, error) {
	if err := checkWait(int64(in.Timeout / time.Second)); err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, in.Instance)
	if err != nil {
		return nil, err
	}
	return h.startWait(ctx, c.Agent.ID, instance, resyncAgent, in.Cursor, in.Timeout, h.settings.WaitsPerAgent, "across your sessions")
}

// startWait begins a wait of principalID's stream after cursor.
func (h *Hub) startWait(ctx context.Context, principalID, instance, resync string, cursor *string, timeout time.Duration, limit int, across string) (*Waiting, error) {
	if err := checkWait(int64(timeout / time.Second)); err != nil {
		return nil, err
	}
	from, err := h.parseCursor(ctx, principalID, resync, cursor)
	if err != nil {
		return nil, err
	}
	ctx, release, err := h.acquireWait(ctx, principalID, instance, limit, across)
	if err != nil {
		return nil, err
	}
	w := &Waiting{h: h, ctx: ctx, recipientID: principalID, instance: instance, from: from, release: release,
		held: heldBack{waker: h.waker, now: time.Now}}
	if timeout > 0 {
		w.unlisten = h.listen(ctx, principalID, instance) // presence (§19)
	}
	// Subscribe before the first look: a commit after this point wakes
	// it, and one before it is seen by the look (§13).
	w.wake, w.unsubscribe = h.waker.Subscribe(principalID)
	w.timer = time.NewTimer(timeout)
	w.timeUp = w.timer.C
	return w, nil
}

// Step takes in what the last Sleep woke to and looks at the stream once,
// reporting whether the wait is over (its Result ready). It reads.
func (w *Waiting) Step() bool {
	if w.done {
		return true
	}
	if w.slept {
		w.slept = false
		switch w.woke {
		case wokeByTimeout:
			if !w.waiting {
				return w.timedOut()
			}
			w.timeUp = nil // look once more for what is held back
		case wokeByShutdown:
			return w.timedOut()
		case wokeByDone:
			if context.Cause(w.ctx) == errSuperseded {
				return w.superseded()
			}
			return w.fail(w.ctx.Err())
		}
	}
	h := w.h
	w.queried = h.commits.now()
	events, last, heldTx, err := h.visibleEvents(w.ctx, w.recipientID, w.from)
	if err != nil && context.Cause(w.ctx) == errSuperseded {
		return w.superseded()
	}
	if err != nil {
		return w.fail(err)
	}
	var seen Pos // the last event looked at, shown or not
	if last != w.from {
		seen = last
	}
	w.waiting = w.held.waiting(heldTx, seen)
	if len(events) > 0 && !w.waiting {
		return w.hand(&WaitResult{Events: events, Cursor: h.cursor(w.recipientID, last)})
	}
	if len(events) == 0 {
		w.from = last // else look again from where this look began, for them all at once
	}
	w.commits, w.again = nil, nil
	if w.waiting {
		w.commits, w.again = w.held.ask()
	} else if w.timeUp == nil {
		return w.timedOut()
	}
	return false
}

// Sleep parks until the next look is due: a commit for the recipient, the
// timeout, the client hanging up, a newer wait of the session, the hub
// shutting down, or (for events held back) a retry. It reads nothing.
func (w *Waiting) Sleep() {
	w.woke = w.h.sleep(w.ctx, w.recipientID, w.queried, w.wake, w.commits, w.again, w.timeUp)
	w.slept = true
}

// Result is what the wait handed over, once Step reported it over.
func (w *Waiting) Result() (*WaitResult, error) { return w.result, w.err }

// Close ends the wait, over or not: it gives back its slot and stops
// listening. It may be called more than once.
func (w *Waiting) Close() {
	if w.release == nil {
		return
	}
	w.held.stop()
	w.timer.Stop()
	w.unsubscribe()
	if w.unlisten != nil {
		w.unlisten()
	}
	w.release()
	w.release = nil
}

// drive runs the wait to its end on this goroutine, its steps off it.
func (w *Waiting) drive() (*WaitResult, error) {
	defer w.Close()
	for {
		var done bool
		OffStack(func() { done = w.Step() })
		if done {
			return w.Result()
		}
		w.Sleep()
	}
}

func (w *Waiting) timedOut() bool {
	return w.hand(&WaitResult{Cursor: w.h.cursor(w.recipientID, w.from), TimedOut: true})
}

func (w *Waiting) superseded() bool {
	return w.hand(&WaitResult{Cursor: w.h.cursor(w.recipientID, w.from), Superseded: true})
}

// hand ends the wait with r, telling how each message stands for the
// agent's session when it has one.
func (w *Waiting) hand(r *WaitResult) bool {
	if w.instance != "" && len(r.Events) > 0 {
		var err error
		if r.Addressing, err = w.h.addressEvents(w.ctx, w.recipientID, w.instance, r.Events); err != nil {
			return w.fail(err)
		}
	}
	w.done, w.result = true, r
	return true
}

func (w *Waiting) fail(err error) bool {
	w.done, w.err = true, err
	return true
}
