package rooms_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/rooms"
)

var ctx = context.Background()

var code = hubtest.Code

// world is the Rooms over a hubtest world.
type world struct {
	*hubtest.World
	rooms *rooms.Rooms
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	return &world{World: w, rooms: rooms.New(w.Hub, w.Store)}
}

// TestRoomWork: an agent's work in a room by status, the next message (a
// stuck attempt included), and finishing only a running attempt (§5,
// §10.5).
func TestRoomWork(t *testing.T) {
	w := newWorld(t)
	conv := w.Room(t, w.Planner, "alice/reviewer")
	var ids []string
	for _, body := range []string{"@reviewer one", "@reviewer two", "@reviewer three"} {
		ids = append(ids, w.Send(t, w.Planner, conv, body).Message.ID)
	}
	step := func(id, outcome, errText string) error {
		_, err := w.Hub.Process(ctx, w.Reviewer, hub.ProcessInput{ConversationID: conv, MessageID: id, Outcome: outcome, Error: errText})
		return err
	}
	if err := step(ids[0], hub.OutcomeDone, ""); code(err) != "no_attempt" {
		t.Errorf("processed with no attempt: %v, want no_attempt", err)
	}
	if err := step(ids[0], hub.OutcomeFailed, ""); code(err) != "invalid_argument" {
		t.Errorf("failed with no error: %v, want invalid_argument", err)
	}
	for _, s := range []struct{ id, outcome, err string }{
		{ids[0], hub.OutcomeProcessing, ""}, {ids[0], hub.OutcomeDone, ""},
		{ids[1], hub.OutcomeProcessing, ""}, {ids[1], hub.OutcomeFailed, "the build broke"},
		{ids[2], hub.OutcomeProcessing, ""},
	} {
		if err := step(s.id, s.outcome, s.err); err != nil {
			t.Fatalf("%s %s: %v", s.id, s.outcome, err)
		}
	}
	if err := step(ids[1], hub.OutcomeDone, ""); code(err) != "no_attempt" {
		t.Errorf("processed after a failed attempt: %v, want no_attempt", err)
	}
	other := w.Room(t, w.Planner, "alice/reviewer")
	if _, err := w.Hub.Process(ctx, w.Reviewer, hub.ProcessInput{ConversationID: other, MessageID: ids[2], Outcome: hub.OutcomeDone}); code(err) != "not_found" {
		t.Errorf("a message named with another room: %v, want not_found", err)
	}
	for status, want := range map[string][]string{
		"": {ids[1], ids[2]}, "pending": {ids[1]}, "processing": {ids[2]}, "processed": {ids[0]}, "failed": {ids[1]}, "all": ids,
	} {
		p, err := w.rooms.Work(ctx, w.Reviewer, conv, status, hub.Paging{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range p.Items {
			got = append(got, it.Message.ID)
		}
		if !slices.Equal(got, want) || p.Total != len(want) {
			t.Errorf("work %q: %v (total %d), want %v", status, got, p.Total, want)
		}
	}
	if _, err := w.rooms.Work(ctx, w.Reviewer, conv, "done", hub.Paging{}); code(err) != "invalid_argument" {
		t.Errorf("an unknown status: %v, want invalid_argument", err)
	}
	page, err := w.rooms.Work(ctx, w.Reviewer, conv, "all", hub.Paging{Number: 2, Size: 2})
	if err != nil || len(page.Items) != 1 || page.Items[0].Message.ID != ids[2] || page.More {
		t.Errorf("page 2 of 2: %+v %v, want the third alone and nothing more", page, err)
	}
	if _, err := w.rooms.Work(ctx, w.Reviewer, conv, "all", hub.Paging{Size: hub.RoomPage.Max + 1}); code(err) != "invalid_argument" {
		t.Errorf("a page over the maximum: %v, want invalid_argument", err)
	}
	// The failed one comes next: it is older than the one processing.
	next, err := w.rooms.NextWork(ctx, w.Reviewer, conv)
	if err != nil || next.Message.ID != ids[1] || next.Delivery.State != hub.DeliveryFailed {
		t.Fatalf("next: %+v %v, want the failed message", next, err)
	}
	if err := step(ids[1], hub.OutcomeProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if err := step(ids[1], hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	// The one left processing — its agent crashed — comes next, and stuck
	// once the setting's time has passed.
	w.Clock.Advance(w.Settings.StuckAfter + time.Minute)
	next, err = w.rooms.NextWork(ctx, w.Reviewer, conv)
	if err != nil || next.Message.ID != ids[2] || !w.Hub.Stuck(&next.Delivery) {
		t.Errorf("next after a crash: %+v %v, want the stuck one", next, err)
	}
}

// TestChatContext: an agent's context in a room is everything it sent,
// event posts included, and every text message that mentions it — not an
// event post that mentions it, nor what others said to others (§10.5).
func TestChatContext(t *testing.T) {
	w := newWorld(t)
	w.Agent(t, "alice/scout")
	conv := w.Room(t, w.Planner, "alice/reviewer", "alice/scout")
	mine := w.Send(t, w.Reviewer, conv, "@planner ready")
	thought, err := w.Hub.SendMessage(ctx, w.Reviewer, hub.SendInput{ConversationID: conv, Body: "thinking", Kind: "thought"})
	if err != nil {
		t.Fatal(err)
	}
	w.Send(t, w.Planner, conv, "@scout not for the reviewer")
	toMe := w.Send(t, w.Planner, conv, "@reviewer for you")
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "ran tests", Kind: "tool_result", Mentions: []string{"reviewer"}}); err != nil {
		t.Fatal(err)
	}
	p, err := w.rooms.ChatContext(ctx, w.Reviewer, conv, hub.Paging{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range p.Messages {
		got = append(got, m.ID)
	}
	if want := []string{mine.Message.ID, thought.Message.ID, toMe.Message.ID}; !slices.Equal(got, want) || p.Total != 3 {
		t.Errorf("context %v (total %d), want %v", got, p.Total, want)
	}
	if p, err := w.rooms.ChatContext(ctx, w.Reviewer, conv, hub.Paging{Number: 2, Size: 2}); err != nil || len(p.Messages) != 1 || p.Messages[0].ID != toMe.Message.ID {
		t.Errorf("context page 2: %+v %v", p, err)
	}
}
