package search_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/search"
)

// found is what c finds for query, as "body" strings.
func found(t *testing.T, res *search.Result, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.Message.Body)
	}
	slices.Sort(out)
	return out
}

// TestSearchFindsOnlyWhatEachCanRead: three people and their agents each
// find, right after it is sent, exactly what they may read today: their
// own conversations, and a person their agents' too; never a held or
// rejected message, a closed conversation or one they left.
func TestSearchFindsOnlyWhatEachCanRead(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	carol, err := w.Hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	scout := w.Agent(t, "carol/scout")
	siblings := w.Direct(t, w.Planner, "alice/reviewer")
	aliceBob := w.Consent(t, w.Planner, bob, "bob/helper")
	bobCarol := w.Consent(t, w.Helper, carol, "carol/scout")
	carolOwn := w.Direct(t, scout, "carol")

	// Each is found as soon as its send returns.
	for _, s := range []struct {
		conv string
		body string
		from *hub.Caller
	}{
		{siblings, "kiwi between alice's agents", w.Planner},
		{aliceBob, "kiwi from alice's planner to bob's helper", w.Planner},
		{bobCarol, "kiwi from bob's helper to carol's scout", w.Helper},
	} {
		r := w.Send(t, s.from, s.conv, s.body)
		res, err := w.finder.Search(ctx, s.from, search.Input{Query: "kiwi", ConversationID: s.conv})
		if got := found(t, res, err); !slices.Equal(got, []string{s.body}) || res.Hits[0].Message.ID != r.Message.ID {
			t.Fatalf("right after %q was sent: %v", s.body, got)
		}
	}
	w.Clock.Advance(time.Minute)
	if _, err := w.Hub.PostAsPerson(ctx, carol, carolOwn, "kiwi from carol herself", ""); err != nil {
		t.Fatal(err)
	}

	// alice's reviewer sends for review: held is found by nobody, edited
	// and approved it is found by its final words, rejected never.
	if _, err := w.Hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	reviewer, _ := w.Hub.Authenticate(ctx, w.Tokens["alice/reviewer"])
	held, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: siblings, Body: "kiwi held for review"})
	if err != nil {
		t.Fatal(err)
	}
	rejected, err := w.Hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: siblings, Body: "kiwi rejected by alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []*hub.Caller{w.Planner, reviewer} {
		res, err := w.finder.Search(ctx, who, search.Input{Query: "review OR rejected"})
		if got := found(t, res, err); len(got) != 0 {
			t.Fatalf("%s finds held messages: %v", who.Agent.Handle(), got)
		}
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, held.Message.ID, hub.Decision{Approve: true, Body: "kiwi as alice rewrote it"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideHeld(ctx, alice, rejected.Message.ID, hub.Decision{Approve: false}); err != nil {
		t.Fatal(err)
	}

	agents := []string{"kiwi as alice rewrote it", "kiwi between alice's agents"}
	aliceAndBob := "kiwi from alice's planner to bob's helper"
	bobAndCarol := "kiwi from bob's helper to carol's scout"
	carols := "kiwi from carol herself"
	want := map[string][]string{
		"alice/planner":  append(slices.Clone(agents), aliceAndBob),
		"alice/reviewer": agents,
		"bob/helper":     {aliceAndBob, bobAndCarol},
		"carol/scout":    {bobAndCarol, carols},
		"alice":          append(slices.Clone(agents), aliceAndBob),
		"bob":            {aliceAndBob, bobAndCarol},
		"carol":          {bobAndCarol, carols},
	}
	callers := map[string]*hub.Caller{"alice/planner": w.Planner, "alice/reviewer": reviewer, "bob/helper": w.Helper, "carol/scout": scout}
	people := map[string]*hub.User{"alice": alice, "bob": bob, "carol": carol}
	check := func(stage string, want map[string][]string) {
		t.Helper()
		for who, want := range want {
			var res *search.Result
			var err error
			if c, ok := callers[who]; ok {
				res, err = w.finder.Search(ctx, c, search.Input{Query: "kiwi"})
			} else {
				res, err = w.finder.PersonSearch(ctx, people[who], search.Input{Query: "kiwi"})
			}
			want = slices.Sorted(slices.Values(want))
			if diff := cmp.Diff(want, found(t, res, err)); diff != "" {
				t.Errorf("%s: %s finds (-want +got):\n%s", stage, who, diff)
			}
		}
	}
	check("at first", want)

	// The reviewer leaves a group; it drops out of the reviewer's search
	// and stays in its owner's, through the planner.
	g, err := w.Hub.CreateThread(ctx, w.Planner, hub.ThreadSpec{Title: "kiwi group", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	w.Send(t, w.Planner, g.Conversation.ID, "kiwi in the group")
	if _, err := w.Hub.RemoveParticipant(ctx, reviewer, g.Conversation.ID, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	want["alice/planner"] = append(want["alice/planner"], "kiwi in the group")
	want["alice"] = append(want["alice"], "kiwi in the group")
	check("after the reviewer left the group", want)

	// A closed conversation drops out for everyone.
	if _, err := w.Hub.CloseConversation(ctx, g.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	want["alice/planner"] = want["alice/planner"][:3]
	want["alice"] = want["alice"][:3]
	check("after the group closed", want)

	// Narrowing: to a conversation or project one may read, to a sender,
	// to a time; one that is not open to the caller is not_found.
	if _, err := w.finder.Search(ctx, w.Helper, search.Input{Query: "kiwi", ConversationID: siblings}); code(err) != "not_found" {
		t.Errorf("bob's helper narrowing to alice's agents' conversation: %v, want not_found", err)
	}
	if _, err := w.finder.PersonSearch(ctx, carol, search.Input{Query: "kiwi", ConversationID: aliceBob}); code(err) != "not_found" {
		t.Errorf("carol narrowing to alice and bob's conversation: %v, want not_found", err)
	}
	res, err := w.finder.PersonSearch(ctx, bob, search.Input{Query: "kiwi", ConversationID: aliceBob})
	if diff := cmp.Diff([]string{aliceAndBob}, found(t, res, err)); diff != "" {
		t.Errorf("bob in one conversation (-want +got):\n%s", diff)
	}
	res, err = w.finder.PersonSearch(ctx, bob, search.Input{Query: "kiwi", From: "@Bob/Helper"})
	if diff := cmp.Diff([]string{bobAndCarol}, found(t, res, err)); diff != "" {
		t.Errorf("bob's search from his helper (-want +got):\n%s", diff)
	}
	res, err = w.finder.Search(ctx, scout, search.Input{Query: "kiwi", From: "carol"})
	if diff := cmp.Diff([]string{carols}, found(t, res, err)); diff != "" {
		t.Errorf("the scout's search from carol (-want +got):\n%s", diff)
	}
	later := hub.FormatTime(res.Hits[0].Message.CreatedAt)
	res, err = w.finder.PersonSearch(ctx, carol, search.Input{Query: "kiwi", Since: later})
	if diff := cmp.Diff([]string{carols}, found(t, res, err)); diff != "" {
		t.Errorf("carol's search since her own message (-want +got):\n%s", diff)
	}
	for _, in := range []search.Input{
		{Query: "kiwi", From: "not a handle"},
		{Query: "kiwi", Since: "yesterday"},
		{Query: "kiwi", Limit: hub.SearchPage.Max + 1},
		{Query: `"kiwi`},
	} {
		if _, err := w.finder.PersonSearch(ctx, carol, in); code(err) != "invalid_argument" && code(err) != "invalid_query" {
			t.Errorf("%+v: %v, want invalid", in, err)
		}
	}
	home, err := w.Hub.Whoami(ctx, w.Planner, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.finder.Search(ctx, w.Helper, search.Input{Query: "kiwi", ProjectID: home.Home.Project.ID}); code(err) != "not_found" {
		t.Errorf("bob's helper narrowing to alice's home project: %v, want not_found", err)
	}
	if _, err := w.finder.PersonSearch(ctx, bob, search.Input{Query: "kiwi", ProjectID: home.Home.Project.ID}); code(err) != "not_found" {
		t.Errorf("bob narrowing to alice's home project: %v, want not_found", err)
	}
}

// TestSearchIsAListing: a search hands over no body to read and marks
// nothing read — no place moves, no delivery is fetched — and says when
// more matched than its limit.
func TestSearchIsAListing(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for _, n := range []string{"first", "second", "third"} {
		w.Clock.Advance(time.Second)
		w.Send(t, w.Planner, conv, "the "+n+" message about the quarterly report")
	}
	reads, err := w.Store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.finder.Search(ctx, w.Reviewer, search.Input{Query: "quarterly", Limit: 2})
	if err != nil || len(res.Hits) != 2 || !res.More {
		t.Fatalf("search of 3 with limit 2: %+v, %v; want 2 and more", res, err)
	}
	if res.Hits[0].Message.CreatedAt.Before(res.Hits[1].Message.CreatedAt) {
		t.Errorf("equal matches not newest first")
	}
	if _, err := w.finder.PersonSearch(ctx, w.Person(t, "alice"), search.Input{Query: "quarterly"}); err != nil {
		t.Fatal(err)
	}
	after, err := w.Store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reads, after); diff != "" {
		t.Errorf("places moved by a search (-before +after):\n%s", diff)
	}
	in, err := w.Hub.Inbox(ctx, w.Reviewer, 0, "")
	if err != nil || in.Total != 3 {
		t.Fatalf("inbox: %+v, %v", in, err)
	}
	for _, it := range in.Items {
		if !it.Delivery.FetchedAt.IsZero() {
			t.Errorf("%s was marked fetched by a search", it.Message.ID)
		}
	}
	if n, err := w.Store.Unread(ctx, conv, w.Reviewer.Agent.ID); err != nil || n != 3 {
		t.Errorf("unread after a search: %d, %v; want 3", n, err)
	}
}

// TestSearchFindsWhatReadsTheSame: through the hub, on the suite's store,
// text is found by any form that reads the same and inside CJK runs, and
// each snippet shows the words as they were sent, marked (§18).
func TestSearchFindsWhatReadsTheSame(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	for _, body := range []string{"my Re\u0301sume\u0301 is attached", "a ｚｅｂｒａ crossing", "我明天去東京开会"} {
		w.Send(t, w.Planner, conv, body)
	}
	for _, c := range []struct{ query, snippet string }{
		{"résumé", "my **Re\u0301sume\u0301** is attached"},
		{"zebra", "a **ｚｅｂｒａ** crossing"},
		{"ＺＥＢＲＡ", "a **ｚｅｂｒａ** crossing"},
		{"東京", "我明天去**東京**开会"},
		{"東京开会", "我明天去**東京开会**"},
	} {
		res, err := w.finder.Search(ctx, w.Reviewer, search.Input{Query: c.query})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range res.Hits {
			got = append(got, h.Snippet.Marked())
		}
		if diff := cmp.Diff([]string{c.snippet}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.query, diff)
		}
	}
}
