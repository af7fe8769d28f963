package hub

import (
	"context"
	"errors"
	"hash/maphash"
	"slices"
	"sync/atomic"
	"time"
)

// What the hub tells operations (§14 /metrics): sends by outcome, brakes
// tripped, waits parked and how soon a commit wakes them. The hub only
// reports; how it is counted belongs to the server's wiring
// (internal/metrics), so the hub stays free of any metrics library.

// Observer is told what the hub does that an operator watches (§14). Its
// methods run on the hub's hot paths, from many goroutines at once: they
// must be safe for concurrent use, cheap, and never block.
type Observer interface {
	// Sent is told the outcome of each agent send (SendMessage, whichever
	// face called it), once per call: one of SendOutcomes.
	Sent(outcome string)
	// BrakeTripped is told the word of each brake that refused a send
	// (§7): one of Brakes.
	BrakeTripped(word string)
	// Parked is told +1 when a wait parks (blocks until an event, its
	// timeout or its end) and -1 when it stops being parked.
	Parked(delta int)
	// Woke is told, when a commit of this hub wakes a parked wait, how long
	// after the commit the wait woke up. Waits woken from elsewhere (another
	// replica's notification, the periodic recheck) are not told.
	Woke(after time.Duration)
	// Searched is told how long each search took in the hub, an agent's
	// or a person's (§18), the store's query and the access checks of
	// its hits.
	Searched(took time.Duration)
}

// Outcomes of a send (§7, §10.3): the message was sent, held for review,
// denied by a rule (a brake, consent, a pending close), or failed with an
// error (bad arguments, not found, an internal failure).
const (
	SendSent   = MessageSent
	SendHeld   = MessageHeld
	SendDenied = StatusDenied
	SendError  = "error"
)

// SendOutcomes lists every outcome Observer.Sent is told.
var SendOutcomes = []string{SendSent, SendHeld, SendDenied, SendError}

// nobody is the Observer of a hub given none.
type nobody struct{}

func (nobody) Sent(string)            {}
func (nobody) BrakeTripped(string)    {}
func (nobody) Parked(int)             {}
func (nobody) Woke(time.Duration)     {}
func (nobody) Searched(time.Duration) {}

// observeSend tells the observer a send's outcome, and the brake that
// refused it if one did. A send that went through costs an interface call
// and nothing else: the error path alone looks further.
func (h *Hub) observeSend(res *SendResult, err error) {
	if err == nil {
		if res.Message.Status == MessageHeld {
			h.observer.Sent(SendHeld)
		} else {
			h.observer.Sent(SendSent)
		}
		return
	}
	var r *Refusal
	if !errors.As(err, &r) || r.Status != StatusDenied {
		h.observer.Sent(SendError)
		return
	}
	h.observer.Sent(SendDenied)
	if w := r.Word(); slices.Contains(BrakeWords(), w) {
		h.observer.BrakeTripped(w)
	}
}

// commits remembers, for each recipient, when a commit of this hub last
// published an event for it, so that a wait it wakes can tell how long the
// wake-up took. Recipients share a fixed table by hash: a write per
// recipient per commit, no allocation and no lock. A collision can only
// make a wake-up look sooner than it was, never later.
type commits struct {
	start time.Time // the clock's origin: times are nanoseconds since it (monotonic)
	seed  maphash.Seed
	at    [1024]atomic.Int64
}

func newCommits() *commits { return &commits{start: time.Now(), seed: maphash.MakeSeed()} }

// now is the time since start, in nanoseconds.
func (c *commits) now() int64 { return int64(time.Since(c.start)) }

func (c *commits) slot(recipientID string) *atomic.Int64 {
	return &c.at[maphash.String(c.seed, recipientID)%uint64(len(c.at))]
}

// published records a commit's publication for the recipients.
func (c *commits) published(recipientIDs []string) {
	now := c.now()
	for _, id := range recipientIDs {
		c.slot(id).Store(now)
	}
}

// sleep parks a wait on its channels and reports which one ended it,
// telling the observer that it parked, stopped, and — when a commit of
// this hub since the wait last queried (at queried, from commits.now)
// woke it — how long after that commit it woke. commits and again, when
// not nil, are when to ask again for events held back (heldBack).
func (h *Hub) sleep(ctx context.Context, recipientID string, queried int64, wake, commits <-chan struct{}, again, timeout <-chan time.Time) wakeReason {
	h.observer.Parked(1)
	why := wokeByEvent
	select {
	case <-wake:
		woke := h.commits.now()
		if at := h.commits.slot(recipientID).Load(); at >= queried {
			h.observer.Woke(time.Duration(woke - at))
		}
	case <-commits:
	case <-again:
	case <-timeout:
		why = wokeByTimeout
	case <-h.stop:
		why = wokeByShutdown
	case <-ctx.Done():
		why = wokeByDone
	}
	h.observer.Parked(-1)
	return why
}

// wakeReason is what ended a parked wait.
type wakeReason int

const (
	wokeByEvent wakeReason = iota
	wokeByTimeout
	wokeByShutdown
	wokeByDone
)
