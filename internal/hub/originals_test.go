package hub_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestEditedWordsOnlyForTheEditor: the agent's own words of a message its
// owner edited reach that owner — reading, the latest page, an export —
// and no one else: not bob, a person taking part, nor his export, nor any
// agent (read_messages, read_message, a thread's latest, search, events),
// the sending agent included (§7).
func TestEditedWordsOnlyForTheEditor(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.reach.RequestContact(ctx, bob, "alice", ""); err != nil {
		t.Fatal(err)
	}
	p, err := w.Hub.CreateProject(ctx, alice, "Launch", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.AddMember(ctx, alice, p.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetProjectAgent(ctx, alice, p.ID, "planner", hub.AccessSpeak, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetProjectAgent(ctx, bob, p.ID, "helper", hub.AccessSpeak, false); err != nil {
		t.Fatal(err)
	}
	th, err := w.Hub.OpenThread(ctx, w.Planner, p.ID, "Plan", "")
	if err != nil {
		t.Fatal(err)
	}
	thread := th.Conversation.ID
	cursors := map[string]*string{"bob/helper": w.Latest(t, w.Helper), "alice/planner": w.Latest(t, w.Planner)}
	bobCursor, err := w.Hub.LatestCursor(ctx, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	held := w.Send(t, w.Planner, thread, "draft: pineapples now").Message
	decided, err := w.Hub.DecideHeld(ctx, alice, held.ID, hub.Decision{Approve: true, Body: "mangoes on Friday"})
	if err != nil || decided.OriginalBody != "draft: pineapples now" {
		t.Fatalf("alice editing: %+v, %v", decided, err)
	}

	// check is one hand-over of the edited message to who.
	check := func(who string, m *hub.Message, original string) {
		t.Helper()
		if m == nil || m.Body != "mangoes on Friday" || m.Authority != hub.AuthorityEdited || m.OriginalBody != original {
			t.Errorf("%s: %+v; want the approved words, owner_edited, original %q", who, m, original)
		}
	}
	last := func(ms []*hub.Message) *hub.Message {
		if len(ms) == 0 {
			return nil
		}
		return ms[len(ms)-1]
	}
	for _, c := range []struct {
		u        *hub.User
		original string
	}{{alice, "draft: pineapples now"}, {bob, ""}} {
		_, res, err := w.Hub.PersonMessages(ctx, c.u, thread, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		check(c.u.Handle+" reading", last(res.Messages), c.original)
		if _, res, err = w.Hub.PersonRecent(ctx, c.u, thread, 0); err != nil {
			t.Fatal(err)
		}
		check(c.u.Handle+" on the latest page", last(res.Messages), c.original)
		e, err := export.New(w.Hub, w.Store).Project(ctx, c.u, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		check(c.u.Handle+" exporting", last(e.Conversations[0].Messages), c.original)
	}
	r, err := w.Hub.WaitPerson(ctx, bob, bobCursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Events {
		if e.Message != nil && e.Message.OriginalBody != "" {
			t.Errorf("bob's event %s carries the draft", e.Type)
		}
	}
	for _, c := range []struct {
		name   string
		caller *hub.Caller
	}{{"bob/helper", w.Helper}, {"alice/planner", w.Planner}} {
		res, err := w.Hub.ReadMessages(ctx, c.caller, hub.ReadInput{ConversationID: thread})
		if err != nil {
			t.Fatal(err)
		}
		check(c.name+" read_messages", last(res.Messages), "")
		m, err := w.Hub.ReadMessage(ctx, c.caller, held.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		check(c.name+" read_message", m, "")
		_, res, err = w.Hub.Recent(ctx, c.caller, thread, 0)
		if err != nil {
			t.Fatal(err)
		}
		check(c.name+" a thread's latest", last(res.Messages), "")
		storetest.SearchIndexed(t, w.Store)
		found, err := search.New(w.Hub, w.Store).Search(ctx, c.caller, search.Input{Query: "mangoes"})
		if err != nil || len(found.Hits) != 1 {
			t.Fatalf("%s searching: %+v, %v", c.name, found, err)
		}
		check(c.name+" search", found.Hits[0].Message, "")
		if found, _ := search.New(w.Hub, w.Store).Search(ctx, c.caller, search.Input{Query: "pineapples"}); len(found.Hits) != 0 {
			t.Errorf("%s finds the message by the draft's words", c.name)
		}
		wr, err := w.Hub.Wait(ctx, c.caller, hub.WaitInput{Cursor: cursors[c.name]})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range wr.Events {
			if e.Message != nil && (e.Message.OriginalBody != "" || strings.Contains(e.Message.Body, "pineapples")) {
				t.Errorf("%s's event %s carries the draft", c.name, e.Type)
			}
		}
	}
}
