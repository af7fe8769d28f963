package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// historyRows is what a history leaves that the hub reads back: each
// stream's events (type, conversation, message) for the writer, the reader
// and their owner, the reader's inbox (conversation, seq, state), and the
// places read in each conversation.
type historyRows struct {
	Events map[string][]string
	Inbox  []string
	Total  int
	Reads  []string
}

// history makes a world of one owner and two agents, the writer in n/50
// threads with the reader, writes n messages of the writer's either with
// fillHistory or as sends and acknowledgements through the hub, and reads
// back what they left.
func history(t *testing.T, n int, fill bool) historyRows {
	t.Helper()
	ctx := context.Background()
	settings := hub.DefaultSettings()
	settings.PauseTurns, settings.Budget = 1<<20, 1<<20 // the history comes faster than brakes allow
	db := storetest.Open(t)
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler), Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Shutdown)
	owner, err := h.CreateUser(ctx, "w5", "")
	if err != nil {
		t.Fatal(err)
	}
	var agents []*hub.Caller
	for _, slug := range []string{"writer", "reader"} {
		if _, err := h.CreateAgent(ctx, hub.AgentSpec{Handle: "w5/" + slug}); err != nil {
			t.Fatal(err)
		}
		_, secret, err := h.MintToken(ctx, hub.TokenSpec{Owner: "w5", Agent: slug})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, c)
	}
	writer, reader := agents[0], agents[1]
	var convs []*hub.ConversationView
	index := map[string]int{} // conversation id → its place in convs, the same in both worlds
	for start := 0; start < n; start += perConversation {
		v, err := h.CreateThread(ctx, writer, hub.ThreadSpec{Title: "history", Participants: []string{"w5/reader"}})
		if err != nil {
			t.Fatal(err)
		}
		index[v.Conversation.ID] = len(convs)
		convs = append(convs, v)
	}
	cursors := map[string]string{}
	for _, who := range []struct {
		name string
		id   string
	}{{"writer", writer.Agent.ID}, {"reader", reader.Agent.ID}, {"owner", owner.ID}} {
		if cursors[who.name], err = h.LatestCursor(ctx, who.id); err != nil {
			t.Fatal(err)
		}
	}

	if fill {
		var written atomic.Int64
		if err := fillHistory(ctx, db, writer, reader, convs, n, &written); err != nil {
			t.Fatal(err)
		}
		if written.Load() != int64(n) {
			t.Fatalf("fillHistory counted %d messages, want %d", written.Load(), n)
		}
	} else {
		for k := range n {
			sent, err := h.SendMessage(ctx, writer, hub.SendInput{ConversationID: convs[k/perConversation].Conversation.ID, Body: fmt.Sprintf("history %d", k)})
			if err != nil || sent.Message.Status != hub.MessageSent {
				t.Fatalf("send %d: %+v %v", k, sent, err)
			}
			if k < n-20 {
				if _, err := h.Acknowledge(ctx, reader, sent.Message.ID, hub.OutcomeDone, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	rows := historyRows{Events: map[string][]string{}}
	line := func(e *hub.Event) string {
		body := ""
		if e.Message != nil {
			body = e.Message.Body
		}
		return fmt.Sprintf("%s conv%d %s", e.Type, index[e.ConversationID], body)
	}
	for name, cursor := range cursors {
		for {
			var res *hub.WaitResult
			switch name {
			case "owner":
				res, err = h.WaitPerson(ctx, owner, cursor, 0)
			case "writer":
				res, err = h.Wait(ctx, writer, hub.WaitInput{Cursor: &cursor})
			default:
				res, err = h.Wait(ctx, reader, hub.WaitInput{Cursor: &cursor})
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Events {
				rows.Events[name] = append(rows.Events[name], line(e))
			}
			if len(res.Events) == 0 {
				break
			}
			cursor = res.Cursor
		}
	}
	in, err := h.Inbox(ctx, reader, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	rows.Total = in.Total
	for _, it := range in.Items {
		rows.Inbox = append(rows.Inbox, fmt.Sprintf("conv%d #%d %s", index[it.Message.ConversationID], it.Message.Seq, it.Delivery.State))
	}
	for i, v := range convs {
		_, res, err := h.PersonRecent(ctx, owner, v.Conversation.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Reads {
			rows.Reads = append(rows.Reads, fmt.Sprintf("conv%d %s up to #%d", i, r.Handle, r.LastReadSeq))
		}
	}
	return rows
}

// TestFillHistoryWritesWhatSendsWrite: the history W5 writes straight
// through the store is what sends and acknowledgements through the hub
// leave — the same events on every stream, the reader's inbox holding the
// last 20 messages waiting, the writer's place at the end of each
// conversation — for 60 messages, a full conversation and part of
// another.
func TestFillHistoryWritesWhatSendsWrite(t *testing.T) {
	const n = 60
	sent, filled := history(t, n, false), history(t, n, true)
	if len(sent.Events["writer"]) != n || len(sent.Events["reader"]) != n || len(sent.Events["owner"]) != n || sent.Total != 20 {
		t.Fatalf("the sends left %d, %d and %d events and %d waiting; want %d each and 20", len(sent.Events["writer"]),
			len(sent.Events["reader"]), len(sent.Events["owner"]), sent.Total, n)
	}
	if diff := cmp.Diff(sent, filled); diff != "" {
		t.Errorf("fillHistory left other rows than sends do (-sent +filled):\n%s", diff)
	}
}
