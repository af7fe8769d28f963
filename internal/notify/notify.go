// Package notify wakes parked waiters when a commit makes new events
// visible (DESIGN.md §6, §13). Local serves one process: the SQLite
// deployment, and the in-process half of every replica.
package notify

import "sync"

// Local is an in-process hub.Waker. A waiter subscribes before it queries;
// Publish signals every subscriber of the named recipients without blocking
// (each subscription holds at most one pending signal, which is all a waiter
// needs: it re-queries on wake).
type Local struct {
	mu   sync.Mutex
	subs map[string]map[*sub]struct{}
}

type sub struct{ ch chan struct{} }

// NewLocal returns an empty Local.
func NewLocal() *Local { return &Local{subs: map[string]map[*sub]struct{}{}} }

// Subscribe registers a waiter for recipientID. The returned cancel must be
// called when the waiter leaves.
func (l *Local) Subscribe(recipientID string) (<-chan struct{}, func()) {
	s := &sub{ch: make(chan struct{}, 1)}
	l.mu.Lock()
	set := l.subs[recipientID]
	if set == nil {
		set = map[*sub]struct{}{}
		l.subs[recipientID] = set
	}
	set[s] = struct{}{}
	l.mu.Unlock()
	return s.ch, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(set, s)
		if len(set) == 0 { // set is still l.subs[recipientID]: it is dropped only when empty
			delete(l.subs, recipientID)
		}
	}
}

// Publish wakes every current subscriber of the recipients, and every
// subscriber of hub.AnyRecipient ("").
func (l *Local) Publish(recipientIDs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range recipientIDs {
		l.signal(id)
	}
	l.signal("")
}

func (l *Local) signal(recipientID string) {
	for s := range l.subs[recipientID] {
		select {
		case s.ch <- struct{}{}:
		default: // a signal is already pending
		}
	}
}

// Waiters counts the parked waits: the current subscriptions of a
// recipient (for tests). A subscriber of every commit (hub.AnyRecipient)
// is not one — a look held back by transactions still running takes one
// while it waits, before any wait of its request parks.
func (l *Local) Waiters() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id, set := range l.subs {
		if id != "" {
			n += len(set)
		}
	}
	return n
}
