package hub_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestListConversationsPages: list_conversations goes on past a page, most
// recently active first, and says when more are there (§10.1 has_more).
func TestListConversationsPages(t *testing.T) {
	w := newWorld(t)
	for i := range 5 {
		_, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: fmt.Sprintf("task %d", i+1), Participants: []string{"alice/reviewer"}})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			w.Clock.Advance(time.Second) // some share an updated time
		}
	}
	all, err := w.Hub.ListConversations(ctx, w.Reviewer, "", hub.ConversationsPage.Max)
	if err != nil || all.Next != "" || len(all.Conversations) != 5 {
		t.Fatalf("one page of all: %+v, %v", all, err)
	}
	var want, got []string
	for _, l := range all.Conversations {
		want = append(want, l.Conversation.ID)
	}
	var pages []int
	after := ""
	for range 5 {
		p, err := w.Hub.ListConversations(ctx, w.Reviewer, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(p.Conversations))
		for _, l := range p.Conversations {
			got = append(got, l.Conversation.ID)
		}
		if after = p.Next; after == "" {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" || !cmp.Equal(pages, []int{2, 2, 1}) {
		t.Errorf("pages %v of conversations (-want +got):\n%s", pages, diff)
	}
	if _, err := w.Hub.ListConversations(ctx, w.Reviewer, "not a page", 2); code(err) != "invalid_argument" {
		t.Errorf("a made-up after: %v", err)
	}
}
