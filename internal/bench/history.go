package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
)

// historyGrowth is W5: n messages of history (written straight into the
// database, as the admin commands do), then check_inbox and read_messages
// timed one at a time.
func historyGrowth(ctx context.Context, s *server, o Options, n int, d time.Duration) ([]WorkloadStats, error) {
	owner := fmt.Sprintf("w5-%d", n)
	pair, err := s.agents(ctx, owner, "a", 2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "W5: writing %d messages of history\n", n)
	writer, err := s.hub.Authenticate(ctx, pair[0].token)
	if err != nil {
		return nil, err
	}
	reader, err := s.hub.Authenticate(ctx, pair[1].token)
	if err != nil {
		return nil, err
	}
	// Conversations of 50, as sends within the budget brake would fill
	// them; the reader has acknowledged all but the last 20, as a working
	// agent would.
	var convs []*hub.ConversationView
	for start := 0; start < n; start += perConversation {
		v, err := s.hub.CreateThread(ctx, writer, hub.ThreadSpec{Title: "history", Participants: []string{pair[1].handle}})
		if err != nil {
			return nil, err
		}
		convs = append(convs, v)
	}
	var written atomic.Int64
	stop := progress(o.Progress, "W5 history", &written)
	if err := fillHistory(ctx, s.db, writer, reader, convs, n, &written); err != nil {
		stop()
		return nil, err
	}
	stop()
	caughtUp, err := searchCaughtUp(ctx, s.db, o)
	if err != nil {
		return nil, err
	}
	time.Sleep(1500 * time.Millisecond) // the server's recheck sees the new events
	var out []WorkloadStats
	for _, tool := range []string{"check_inbox", "read_messages"} {
		var lat latencies
		var errs failures
		var count atomic.Int64
		before, _ := s.runtime(ctx)
		stop := progress(o.Progress, fmt.Sprintf("W5 %s at %d messages", tool, n), &count)
		start := time.Now()
		for i := 0; time.Since(start) < d; i++ {
			args := map[string]any{}
			if tool == "read_messages" {
				args = map[string]any{"conversation_id": convs[i%len(convs)].Conversation.ID, "mark_read": false, "limit": 20}
			}
			t := time.Now()
			if err := pair[1].call(ctx, tool, args, nil); err != nil {
				errs.add(err)
				continue
			}
			lat = append(lat, time.Since(t))
			count.Add(1)
		}
		stop()
		st := WorkloadStats{Name: fmt.Sprintf("W5 %s at %d messages", tool, n),
			Detail:  fmt.Sprintf("one at a time, client-side time; the search index had the history %.1f s after it was written", caughtUp.Seconds()),
			Latency: lat.summary(), RSSBytes: s.rss()}
		st.Errors, st.FirstError = errs.result()
		out = append(out, st)
		if after, err := s.runtime(ctx); err == nil {
			out = append(out, WorkloadStats{Name: fmt.Sprintf("W5 %s at %d messages, server-side", tool, n),
				Detail:  "the same calls, time in the server (palaver_tool_calls_seconds, interpolated within its buckets)",
				Latency: serverLatency(before, after, tool), ServerSide: true})
		}
	}
	return out, nil
}

// searchCaughtUp waits for the server's search indexer to have the history
// fillHistory wrote, so that what W5 and W6 measure next is the server at
// rest, not its catch-up (SQLite; on PostgreSQL the send indexes), and
// says how long that took.
func searchCaughtUp(ctx context.Context, db *store.DB, o Options) (time.Duration, error) {
	start := time.Now()
	var behind atomic.Int64
	stop := every(o.Progress, func(time.Duration) string {
		return fmt.Sprintf("W5: the server's search index is %d messages behind", behind.Load())
	})
	defer stop()
	for {
		n, err := db.SearchBacklog(ctx)
		if err != nil || n == 0 {
			return time.Since(start), err
		}
		behind.Store(n)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fillBatch is how many messages fillHistory writes a transaction.
const fillBatch = 2000

// fillHistory writes n messages of the writer's into convs, perConversation
// each, straight through the store in transactions of fillBatch: the rows
// a send leaves — the message under its seq, the deliveries and events
// the hub's own hub.Deliveries says it makes (to the reader, message.new
// to both agents and agent.sent to their owner), the writer's read place
// (moved once per conversation, to its last message) — and what the
// reader's acknowledgement leaves (the delivery done), for all but the
// last 20. What sends and acknowledgements through the hub would write,
// about a hundred times faster, so that a million messages fit in a bench
// run; written counts them.
func fillHistory(ctx context.Context, db *store.DB, writer, reader *hub.Caller, convs []*hub.ConversationView, n int, written *atomic.Int64) error {
	for start := 0; start < n; start += fillBatch {
		err := db.Update(ctx, func(tx hub.Tx) error {
			var events []*hub.Event
			for k := start; k < min(start+fillBatch, n); k++ {
				v := convs[k/perConversation]
				conv := v.Conversation.ID
				now := time.Now().UTC().Truncate(time.Millisecond)
				seq, err := tx.NextSeq(ctx, conv, now)
				if err != nil {
					return err
				}
				m := &hub.Message{ID: hub.NewID(hub.IDMessage, now), ConversationID: conv, Seq: seq, Status: hub.MessageSent,
					SenderID: writer.Agent.ID, SenderKind: hub.PrincipalAgent, SenderHandle: writer.Agent.Handle(),
					Body: fmt.Sprintf("history %d", k), Format: hub.FormatText, Kind: hub.MessageText,
					Author: hub.AuthorAgent, Authority: hub.AuthorityAgent, OwnerID: writer.Owner.ID, OwnerHandle: writer.Owner.Handle, CreatedAt: now}
				if err := tx.InsertMessage(ctx, m); err != nil {
					return err
				}
				agents, told := hub.Deliveries(v, m, now)
				if err := tx.InsertDeliveries(ctx, m, agents); err != nil {
					return err
				}
				events = append(events, told...)
				if acked := k < n-20; acked {
					d := &hub.Delivery{AgentID: reader.Agent.ID, MessageID: m.ID, State: hub.DeliveryDone, AckedAt: now}
					if err := tx.SetDeliveryState(ctx, d); err != nil {
						return err
					}
				}
				if last := k%perConversation == perConversation-1 || k == n-1; last {
					if err := tx.MoveRead(ctx, conv, writer.Agent.ID, "", seq, true, now); err != nil {
						return err
					}
				}
				written.Add(1)
			}
			return tx.InsertEvents(ctx, events)
		})
		if err != nil {
			return fmt.Errorf("writing history: %w", err)
		}
	}
	return nil
}
