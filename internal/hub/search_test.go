package hub_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// found is what c finds for query, as "body" strings.
func found(t *testing.T, res *hub.SearchResult, err error) []string {
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
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	carol, err := w.hub.CreateUser(ctx, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	scout := w.agent(t, "carol/scout")
	siblings := w.open(t, w.planner, "alice/reviewer")
	aliceBob := consent(t, w, w.planner, bob, "bob/helper")
	bobCarol := consent(t, w, w.helper, carol, "carol/scout")
	carolOwn := w.open(t, scout, "carol")

	// Each is found as soon as its send returns.
	for _, s := range []struct {
		conv string
		body string
		from *hub.Caller
	}{
		{siblings, "kiwi between alice's agents", w.planner},
		{aliceBob, "kiwi from alice's planner to bob's helper", w.planner},
		{bobCarol, "kiwi from bob's helper to carol's scout", w.helper},
	} {
		r := w.send(t, s.from, s.conv, s.body)
		res, err := w.hub.SearchMessages(ctx, s.from, hub.SearchInput{Query: "kiwi", ConversationID: s.conv})
		if got := found(t, res, err); !slices.Equal(got, []string{s.body}) || res.Hits[0].Message.ID != r.Message.ID {
			t.Fatalf("right after %q was sent: %v", s.body, got)
		}
	}
	w.clock.Advance(time.Minute)
	if _, err := w.hub.PostAsPerson(ctx, carol, carolOwn, "kiwi from carol herself", ""); err != nil {
		t.Fatal(err)
	}

	// alice's reviewer sends for review: held is found by nobody, edited
	// and approved it is found by its final words, rejected never.
	if _, err := w.hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	reviewer, _ := w.hub.Authenticate(ctx, w.tokens["alice/reviewer"])
	held, err := w.hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: siblings, Body: "kiwi held for review"})
	if err != nil {
		t.Fatal(err)
	}
	rejected, err := w.hub.SendMessage(ctx, reviewer, hub.SendInput{ConversationID: siblings, Body: "kiwi rejected by alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []*hub.Caller{w.planner, reviewer} {
		res, err := w.hub.SearchMessages(ctx, who, hub.SearchInput{Query: "review OR rejected"})
		if got := found(t, res, err); len(got) != 0 {
			t.Fatalf("%s finds held messages: %v", who.Agent.Handle(), got)
		}
	}
	if _, err := w.hub.DecideHeld(ctx, alice, held.Message.ID, hub.Decision{Approve: true, Body: "kiwi as alice rewrote it"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.DecideHeld(ctx, alice, rejected.Message.ID, hub.Decision{Approve: false}); err != nil {
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
	callers := map[string]*hub.Caller{"alice/planner": w.planner, "alice/reviewer": reviewer, "bob/helper": w.helper, "carol/scout": scout}
	people := map[string]*hub.User{"alice": alice, "bob": bob, "carol": carol}
	check := func(stage string, want map[string][]string) {
		t.Helper()
		for who, want := range want {
			var res *hub.SearchResult
			var err error
			if c, ok := callers[who]; ok {
				res, err = w.hub.SearchMessages(ctx, c, hub.SearchInput{Query: "kiwi"})
			} else {
				res, err = w.hub.PersonSearch(ctx, people[who], hub.SearchInput{Query: "kiwi"})
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
	g, err := w.hub.CreateThread(ctx, w.planner, hub.ThreadSpec{Title: "kiwi group", Participants: []string{"alice/reviewer"}})
	if err != nil {
		t.Fatal(err)
	}
	w.send(t, w.planner, g.Conversation.ID, "kiwi in the group")
	if _, err := w.hub.RemoveParticipant(ctx, reviewer, g.Conversation.ID, "alice/reviewer"); err != nil {
		t.Fatal(err)
	}
	want["alice/planner"] = append(want["alice/planner"], "kiwi in the group")
	want["alice"] = append(want["alice"], "kiwi in the group")
	check("after the reviewer left the group", want)

	// A closed conversation drops out for everyone.
	if _, err := w.hub.CloseConversation(ctx, g.Conversation.ID); err != nil {
		t.Fatal(err)
	}
	want["alice/planner"] = want["alice/planner"][:3]
	want["alice"] = want["alice"][:3]
	check("after the group closed", want)

	// Narrowing: to a conversation or project one may read, to a sender,
	// to a time; one that is not open to the caller is not_found.
	if _, err := w.hub.SearchMessages(ctx, w.helper, hub.SearchInput{Query: "kiwi", ConversationID: siblings}); code(err) != "not_found" {
		t.Errorf("bob's helper narrowing to alice's agents' conversation: %v, want not_found", err)
	}
	if _, err := w.hub.PersonSearch(ctx, carol, hub.SearchInput{Query: "kiwi", ConversationID: aliceBob}); code(err) != "not_found" {
		t.Errorf("carol narrowing to alice and bob's conversation: %v, want not_found", err)
	}
	res, err := w.hub.PersonSearch(ctx, bob, hub.SearchInput{Query: "kiwi", ConversationID: aliceBob})
	if diff := cmp.Diff([]string{aliceAndBob}, found(t, res, err)); diff != "" {
		t.Errorf("bob in one conversation (-want +got):\n%s", diff)
	}
	res, err = w.hub.PersonSearch(ctx, bob, hub.SearchInput{Query: "kiwi", From: "@Bob/Helper"})
	if diff := cmp.Diff([]string{bobAndCarol}, found(t, res, err)); diff != "" {
		t.Errorf("bob's search from his helper (-want +got):\n%s", diff)
	}
	res, err = w.hub.SearchMessages(ctx, scout, hub.SearchInput{Query: "kiwi", From: "carol"})
	if diff := cmp.Diff([]string{carols}, found(t, res, err)); diff != "" {
		t.Errorf("the scout's search from carol (-want +got):\n%s", diff)
	}
	later := hub.FormatTime(res.Hits[0].Message.CreatedAt)
	res, err = w.hub.PersonSearch(ctx, carol, hub.SearchInput{Query: "kiwi", Since: later})
	if diff := cmp.Diff([]string{carols}, found(t, res, err)); diff != "" {
		t.Errorf("carol's search since her own message (-want +got):\n%s", diff)
	}
	for _, in := range []hub.SearchInput{
		{Query: "kiwi", From: "not a handle"},
		{Query: "kiwi", Since: "yesterday"},
		{Query: "kiwi", Limit: hub.SearchPage.Max + 1},
		{Query: `"kiwi`},
	} {
		if _, err := w.hub.PersonSearch(ctx, carol, in); code(err) != "invalid_argument" && code(err) != "invalid_query" {
			t.Errorf("%+v: %v, want invalid", in, err)
		}
	}
	home, err := w.hub.Whoami(ctx, w.planner, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.SearchMessages(ctx, w.helper, hub.SearchInput{Query: "kiwi", ProjectID: home.Home.Project.ID}); code(err) != "not_found" {
		t.Errorf("bob's helper narrowing to alice's home project: %v, want not_found", err)
	}
	if _, err := w.hub.PersonSearch(ctx, bob, hub.SearchInput{Query: "kiwi", ProjectID: home.Home.Project.ID}); code(err) != "not_found" {
		t.Errorf("bob narrowing to alice's home project: %v, want not_found", err)
	}
}

// TestSearchIsAListing: a search hands over no body to read and marks
// nothing read — no place moves, no delivery is fetched — and says when
// more matched than its limit.
func TestSearchIsAListing(t *testing.T) {
	w := newWorld(t)
	conv := w.open(t, w.planner, "alice/reviewer")
	for _, n := range []string{"first", "second", "third"} {
		w.clock.Advance(time.Second)
		w.send(t, w.planner, conv, "the "+n+" message about the quarterly report")
	}
	reads, err := w.store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.hub.SearchMessages(ctx, w.reviewer, hub.SearchInput{Query: "quarterly", Limit: 2})
	if err != nil || len(res.Hits) != 2 || !res.More {
		t.Fatalf("search of 3 with limit 2: %+v, %v; want 2 and more", res, err)
	}
	if res.Hits[0].Message.CreatedAt.Before(res.Hits[1].Message.CreatedAt) {
		t.Errorf("equal matches not newest first")
	}
	if _, err := w.hub.PersonSearch(ctx, w.person(t, "alice"), hub.SearchInput{Query: "quarterly"}); err != nil {
		t.Fatal(err)
	}
	after, err := w.store.Reads(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reads, after); diff != "" {
		t.Errorf("places moved by a search (-before +after):\n%s", diff)
	}
	in, err := w.hub.Inbox(ctx, w.reviewer, 0, "")
	if err != nil || in.Total != 3 {
		t.Fatalf("inbox: %+v, %v", in, err)
	}
	for _, it := range in.Items {
		if !it.Delivery.FetchedAt.IsZero() {
			t.Errorf("%s was marked fetched by a search", it.Message.ID)
		}
	}
	if n, err := w.store.Unread(ctx, conv, w.reviewer.Agent.ID); err != nil || n != 3 {
		t.Errorf("unread after a search: %d, %v; want 3", n, err)
	}
}

// TestSearchFindsWhatReadsTheSame: through the hub, on the suite's store,
// text is found by any form that reads the same and inside CJK runs, and
// each snippet shows the words as they were sent, marked (§18).
func TestSearchFindsWhatReadsTheSame(t *testing.T) {
	w := newWorld(t)
	conv := w.open(t, w.planner, "alice/reviewer")
	for _, body := range []string{"my Re\u0301sume\u0301 is attached", "a ｚｅｂｒａ crossing", "我明天去東京开会"} {
		w.send(t, w.planner, conv, body)
	}
	for _, c := range []struct{ query, snippet string }{
		{"résumé", "my **Re\u0301sume\u0301** is attached"},
		{"zebra", "a **ｚｅｂｒａ** crossing"},
		{"ＺＥＢＲＡ", "a **ｚｅｂｒａ** crossing"},
		{"東京", "我明天去**東京**开会"},
		{"東京开会", "我明天去**東京开会**"},
	} {
		res, err := w.hub.SearchMessages(ctx, w.reviewer, hub.SearchInput{Query: c.query})
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
