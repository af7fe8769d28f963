package hub_test

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rivo/uniseg"

	"github.com/palaverhq/palaver/internal/hub"
)

func TestParseQuery(t *testing.T) {
	all := func(groups ...[]hub.Phrase) [][]hub.Phrase { return groups }
	p := func(words ...string) hub.Phrase { return words }
	for _, c := range []struct {
		in   string
		want *hub.Query
	}{
		{"retry", &hub.Query{All: all([]hub.Phrase{p("retry")})}},
		{"  Retry   LOGIC ", &hub.Query{All: all([]hub.Phrase{p("retry")}, []hub.Phrase{p("logic")})}},
		{`"retry logic" store.go`, &hub.Query{All: all([]hub.Phrase{p("retry", "logic")}, []hub.Phrase{p("store", "go")})}},
		{"deploy OR release staging", &hub.Query{All: all([]hub.Phrase{p("deploy"), p("release")}, []hub.Phrase{p("staging")})}},
		{`a OR "b c" OR d`, &hub.Query{All: all([]hub.Phrase{p("a"), p("b", "c"), p("d")})}},
		{`deploy -staging -"dry run"`, &hub.Query{All: all([]hub.Phrase{p("deploy")}), Not: []hub.Phrase{p("staging"), p("dry", "run")}}},
		{"or and not", &hub.Query{All: all([]hub.Phrase{p("or")}, []hub.Phrase{p("and")}, []hub.Phrase{p("not")})}},
		{"well-known - —  😀 x", &hub.Query{All: all([]hub.Phrase{p("well", "known")}, []hub.Phrase{p("x")})}},
		{"-OR deploy", &hub.Query{All: all([]hub.Phrase{p("deploy")}), Not: []hub.Phrase{p("or")}}},
		{"Ünïcode 日本語", &hub.Query{All: all([]hub.Phrase{p("ünïcode")}, []hub.Phrase{p("日本", "本語")})}},
		// NFKC and case folding: a decomposed é is the composed one,
		// full-width letters are letters, ß folds to ss.
		{"re\u0301sume\u0301 ＺＥＢＲＡ Straße", &hub.Query{All: all([]hub.Phrase{p("résumé")}, []hub.Phrase{p("zebra")}, []hub.Phrase{p("strasse")})}},
		// CJK runs are their pairs in a row; a run inside a word is a
		// word of its own; one character alone starts a pair.
		{"東京 我明天去東京开会", &hub.Query{All: all([]hub.Phrase{p("東京")}, []hub.Phrase{p("我明", "明天", "天去", "去東", "東京", "京开", "开会")})}},
		{"東京tower 東", &hub.Query{All: all([]hub.Phrase{p("東京", "京", "tower")}, []hub.Phrase{p("東")})}},
	} {
		got, err := hub.ParseQuery(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
	}
}

// TestParseQueryRefusals: every query the language cannot read is an
// invalid argument saying what is wrong, how to write it, and the syntax.
func TestParseQueryRefusals(t *testing.T) {
	for _, c := range []struct{ in, code, says string }{
		{"", "invalid_query", "query is required"},
		{" \t ", "invalid_query", "query is required"},
		{`"retry logic`, "invalid_query", "not closed"},
		{`deploy "`, "invalid_query", "not closed"},
		{"-staging", "invalid_query", "only leaves out"},
		{`-staging -"dry run"`, "invalid_query", "only leaves out"},
		{"OR deploy", "invalid_query", "OR goes between two terms"},
		{"deploy OR", "invalid_query", "ends with it"},
		{"deploy OR OR release", "invalid_query", "OR goes between two terms"},
		{"deploy OR -staging", "invalid_query", "cannot be part of OR"},
		{"-staging OR deploy", "invalid_query", "cannot be part of OR"},
		{"!!! ... 😀", "invalid_query", "no word to look for"},
		{strings.Repeat("a ", 17), "invalid_query", "the limit is 16"},
		{strings.Repeat("é", hub.MaxQuery+1), "too_long", "the limit is 500 characters"},
	} {
		_, err := hub.ParseQuery(c.in)
		e, ok := err.(*hub.Error)
		if !ok || e.Kind != hub.KindInvalid || e.WireCode() != c.code || !strings.Contains(e.Msg, c.says) {
			t.Errorf("%q: %v; want %s saying %q", c.in, err, c.code, c.says)
			continue
		}
		if c.code == "invalid_query" && !strings.HasSuffix(e.Msg, hub.SearchSyntax) {
			t.Errorf("%q: %q does not end with the syntax", c.in, e.Msg)
		}
	}
}

func TestSnippets(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for _, c := range []struct {
		name, body string
		words      []string
		want       string
	}{
		{"a short body whole", "Please look at\n\nthe   retry logic.", []string{"retry"}, "Please look at the **retry** logic."},
		{"every matched word", "Retry, retry — RETRY!", []string{"retry"}, "**Retry**, **retry** — **RETRY**!"},
		{"nothing matched: the start", long + "end", []string{"absent"}, strings.Repeat("lorem ipsum dolor sit amet ", 5) + "lorem ipsum dolor sit…"},
		{"around the word", long + "the retry logic in store.go " + long, []string{"retry", "store"},
			"…sit amet lorem ipsum dolor sit amet the **retry** logic in **store**.go lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum…"},
		{"where most words are", "deploy " + long + "deploy now to staging " + long, []string{"deploy", "staging"},
			"…sit amet lorem ipsum dolor sit amet **deploy** now to **staging** lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor…"},
		// The body as stored, whatever form matched.
		{"decomposed, found composed", "Your Re\u0301sume\u0301, attached", []string{"résumé"}, "Your **Re\u0301sume\u0301**, attached"},
		{"full-width, found by ASCII", "ｚｅｂｒａ crossing ahead", []string{"zebra"}, "**ｚｅｂｒａ** crossing ahead"},
		{"a word inside a CJK run", "我明天去東京开会", []string{"東京"}, "我明天去**東京**开会"},
		{"a longer word inside it", "我明天去東京开会", []string{"東京开会"}, "我明天去**東京开会**"},
		{"one CJK character", "去東京，東", []string{"東"}, "去**東**京，**東**"},
		{"a CJK run cut anywhere", strings.Repeat("天", 200) + "東京" + strings.Repeat("地", 200), []string{"東京"},
			"…" + strings.Repeat("天", 40) + "**東京**" + strings.Repeat("地", 118) + "…"},
	} {
		got := hub.SnippetForTest(c.body, c.words...).Marked()
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestSnippetsCutOnCharacters: whatever the script, a snippet is whole
// characters — whole grapheme clusters, an emoji family or a flag never
// split — at most SnippetLength of the body's and the "…" marks.
func TestSnippetsCutOnCharacters(t *testing.T) {
	for _, unit := range []string{"日本語の文章 ", "😀🎉 ", "é", "👩‍👩‍👧 ", "ab\u0301c ", "🇩🇪🇫🇷", "👩‍👩‍👧👍🏽", "e\u0301\u0323"} {
		for _, at := range []int{0, 37, 150, 400} {
			body := strings.Repeat(unit, 500/utf8.RuneCountInString(unit))
			runes := []rune(body)
			body = string(runes[:at]) + " needle " + string(runes[at:])
			s := hub.SnippetForTest(body, "needle")
			text := s.String()
			if !utf8.ValidString(text) {
				t.Errorf("%q at %d: invalid UTF-8 %q", unit, at, text)
			}
			for _, p := range s {
				if !utf8.ValidString(p.Text) || !strings.Contains(body, strings.Trim(p.Text, "… ")) {
					t.Errorf("%q at %d: part %q is not a piece of the body", unit, at, p.Text)
				}
			}
			if n := utf8.RuneCountInString(strings.Trim(text, "…")); n > hub.SnippetLength {
				t.Errorf("%q at %d: %d characters", unit, at, n)
			}
			if !strings.Contains(s.Marked(), "**needle**") {
				t.Errorf("%q at %d: %q does not mark the word", unit, at, s.Marked())
			}
			clusters := map[string]bool{}
			for g := uniseg.NewGraphemes(body); g.Next(); {
				clusters[g.Str()] = true
			}
			for g := uniseg.NewGraphemes(strings.Trim(text, "… ")); g.Next(); {
				if !clusters[g.Str()] {
					t.Errorf("%q at %d: %q cuts a character: %q is not one of the body's", unit, at, text, g.Str())
					break
				}
			}
		}
	}
}

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

// TestSearchText: the index's words of a text are the query's words of it
// (§18): NFKC, case-folded, CJK runs as overlapping pairs and their last
// character alone; a phrase ending in a single CJK character is a prefix.
func TestSearchText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Please review the retry logic in store.go", "please review the retry logic in store go"},
		{"Re\u0301sume\u0301 — RÉSUMÉ", "résumé résumé"},
		{"ｚｅｂｒａ ＺＥＢＲＡ① Straße", "zebra zebra1 strasse"},
		{"我明天去東京开会。", "我明 明天 天去 去東 東京 京开 开会 会"},
		{"東京tower 東 ｶﾞｲﾄﾞ", "東京 京 tower 東 ガイ イド ド"},
		{"서울에서 만나요", "서울 울에 에서 서 만나 나요 요"},
		{"😀 🎉 ...", ""},
	} {
		if got := hub.SearchText(c.in); got != c.want {
			t.Errorf("SearchText(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		p    hub.Phrase
		want bool
	}{{hub.Phrase{"東"}, true}, {hub.Phrase{"x", "東"}, true}, {hub.Phrase{"東京"}, false}, {hub.Phrase{"x"}, false}, {hub.Phrase{"東", "x"}, false}, {nil, false}} {
		if got := c.p.Prefix(); got != c.want {
			t.Errorf("%q.Prefix() = %v; want %v", c.p, got, c.want)
		}
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
