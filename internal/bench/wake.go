package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// wakePairsWithIdle is how many pairs W2 times beside idle waiters, and
// the size §17's wake target is judged at.
const wakePairsWithIdle = 16

// sendToWake is W2: pairs of a parked waiter and a sender, with idle
// waits of other agents parked in the background.
func sendToWake(ctx context.Context, s *server, o Options, pairs, idle int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W2 send→wake, %d pairs, %d idle waiters", pairs, idle)
	owner := fmt.Sprintf("w2-%dp-%d", pairs, idle)
	if idle > 0 {
		agents, err := s.agents(ctx, owner+"-idle", "idle", (idle+waitsPerAgent-1)/waitsPerAgent)
		if err != nil {
			return WorkloadStats{}, err
		}
		w := park(ctx, s, o, name, agents, idle)
		defer w.stop()
	}
	waiters, err := s.agents(ctx, owner, "waiter", pairs)
	if err != nil {
		return WorkloadStats{}, err
	}
	senders, err := s.agents(ctx, owner, "sender", pairs)
	if err != nil {
		return WorkloadStats{}, err
	}
	st := wakePairs(ctx, s, o, name, waiters, senders, d)
	if rt, err := s.runtime(ctx); err == nil {
		st.Goroutines = int(rt.goroutines) // with the idle waits still parked
	}
	return st, nil
}

// wakePairs has each sender send to its waiter, one message at a time after
// the last was heard, for d. Each message carries its send time, and the
// waiter's wake-up is timed against it: send start → waiter response.
func wakePairs(ctx context.Context, s *server, o Options, name string, waiters, senders []*client, d time.Duration) WorkloadStats {
	var count atomic.Int64
	var errs failures
	var mu sync.Mutex
	var lat, afterAnswer latencies
	stop := progress(o.Progress, name, &count)
	start := time.Now()
	// The waits end once the senders are done.
	waitCtx, endWaits := context.WithCancel(ctx)
	var waits, sends sync.WaitGroup
	for i := range waiters {
		// The waiter starts from its latest event as of now, so no message
		// sent after this is missed, however late its first wait arrives.
		var me struct {
			LatestCursor string `json:"latest_cursor"`
		}
		if err := waiters[i].call(ctx, "whoami", map[string]any{}, &me); err != nil {
			errs.add(err)
			continue
		}
		received := make(chan struct{}, 1)
		var heardAt atomic.Int64 // when the waiter last had a message, Unix ns
		waits.Go(func() {        // the waiter
			cursor := me.LatestCursor
			for {
				var got waitResult
				if err := waiters[i].call(waitCtx, "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 5}, &got); err != nil {
					if waitCtx.Err() == nil {
						errs.add(err)
					}
					return
				}
				now := time.Now()
				if heard := got.sinceStamps(now); len(heard) > 0 {
					heardAt.Store(now.UnixNano())
					mu.Lock()
					lat = append(lat, heard...)
					mu.Unlock()
					count.Add(int64(len(heard)))
					select {
					case received <- struct{}{}:
					default:
					}
				}
				cursor = got.Cursor
			}
		})
		sends.Go(func() { // the sender
			snd := &sender{c: senders[i], peer: waiters[i].handle}
			for k := 0; time.Since(start) < d; k++ {
				if err := snd.ready(ctx); err != nil {
					errs.add(err)
					return
				}
				if err := snd.send(ctx, stamped(fmt.Sprintf("wake %d", k))); err != nil {
					errs.add(err)
					return
				}
				answered := time.Now()
				select {
				case <-received:
					mu.Lock()
					afterAnswer = append(afterAnswer, max(0, time.Unix(0, heardAt.Load()).Sub(answered)))
					mu.Unlock()
				case <-time.After(5 * time.Second):
					errs.add(fmt.Errorf("no wake-up within 5 s"))
				}
			}
		})
	}
	sends.Wait()
	endWaits()
	waits.Wait()
	stop()
	a := afterAnswer.summary()
	st := WorkloadStats{Name: name, Detail: "send start → waiter response", Latency: lat.summary(), AfterAnswer: &a, RSSBytes: s.rss()}
	st.Errors, st.FirstError = errs.result()
	return st
}

// stamped is a message body that starts with its send time, in Unix
// nanoseconds, for the waiter to time its wake-up against.
func stamped(text string) string {
	return body(fmt.Sprintf("%d %s", time.Now().UnixNano(), text))
}

// waitResult is what the bench reads of a wait_for_messages result.
type waitResult struct {
	Cursor string `json:"cursor"`
	Events []struct {
		Message struct {
			Body string `json:"body"`
		} `json:"message"`
	} `json:"events"`
}

// sinceStamps is, for each message of the result with a stamped body, the
// time from its send to now.
func (w waitResult) sinceStamps(now time.Time) []time.Duration {
	var out []time.Duration
	for _, e := range w.Events {
		stamp, _, _ := strings.Cut(e.Message.Body, " ") // "" for events without a message
		if ns, err := strconv.ParseInt(stamp, 10, 64); err == nil {
			out = append(out, now.Sub(time.Unix(0, ns)))
		}
	}
	return out
}

// fanOut is W4: one message into a group of n agents, each parked in a
// wait; the time until the last of them has it.
func fanOut(ctx context.Context, s *server, o Options, n int) (WorkloadStats, error) {
	name := fmt.Sprintf("W4 fan-out to %d waiters", n)
	owner := fmt.Sprintf("w4-%d", n)
	members, err := s.agents(ctx, owner, "member", n)
	if err != nil {
		return WorkloadStats{}, err
	}
	speaker, err := s.agents(ctx, owner, "speaker", 1)
	if err != nil {
		return WorkloadStats{}, err
	}
	handles := make([]string, n)
	for i, m := range members {
		handles[i] = m.handle
	}
	var conv struct {
		ConversationID string `json:"conversation_id"`
	}
	first := min(n, hub.MaxMembers)
	if err := speaker[0].call(ctx, "create_thread", map[string]any{"title": "fan-out", "participants": handles[:first]}, &conv); err != nil {
		return WorkloadStats{}, err
	}
	for _, hd := range handles[first:] {
		if err := speaker[0].call(ctx, "add_participant", map[string]any{"conversation_id": conv.ConversationID, "handle": hd}, nil); err != nil {
			return WorkloadStats{}, err
		}
	}
	// Each waiter waits from its own latest cursor: a cursor is its
	// reader's alone.
	cursors := make([]string, len(members))
	for i, m := range members {
		var me struct {
			LatestCursor string `json:"latest_cursor"`
		}
		if err := m.call(ctx, "whoami", map[string]any{}, &me); err != nil {
			return WorkloadStats{}, err
		}
		cursors[i] = me.LatestCursor
	}
	var errs failures
	var written sync.WaitGroup
	var parked, woken atomic.Int64
	written.Add(n)
	done := make(chan time.Time, n)
	stop := progress(o.Progress, name+", parking", &parked)
	for i, m := range members {
		go func() {
			release := sync.OnceFunc(func() { parked.Add(1); written.Done() })
			if err := m.call(onWritten(ctx, release), "wait_for_messages", map[string]any{"cursor": cursors[i], "timeout_s": 30}, nil); err != nil {
				errs.add(err)
			}
			release() // in case it failed before it was sent
			woken.Add(1)
			done <- time.Now()
		}()
	}
	written.Wait()
	s.settle(ctx)
	stop()
	stop = progress(o.Progress, name+", woken", &woken)
	defer stop()
	start := time.Now()
	if err := speaker[0].send(ctx, conv.ConversationID, body("everyone: one message for all")); err != nil {
		return WorkloadStats{}, err
	}
	var lat latencies
	for range n {
		lat = append(lat, (<-done).Sub(start))
	}
	st := WorkloadStats{Name: name, Detail: "one send; time until each parked waiter had it (max = the last)", Latency: lat.summary(), RSSBytes: s.rss()}
	st.Errors, st.FirstError = errs.result()
	return st, nil
}
