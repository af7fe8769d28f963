package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestSearchPage: the navigation leads to a search form (a GET, so a
// search is a link); each hit shows its snippet with the matched words
// marked and links to the message on its conversation's page, an old one
// on the page that starts with it; another person finds nothing of it; a
// query that cannot be read is said on the page, with what was typed kept.
func TestSearchPage(t *testing.T) {
	s := newSite(t)
	alice, bob := s.person(t, "alice"), s.person(t, "bob")
	planner, _ := s.agent(t, "alice/planner")
	s.agent(t, "alice/reviewer")
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	send := func(body string) {
		t.Helper()
		if _, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	send("The kiwi crate <b>arrives</b> on Friday")
	for i := range 110 {
		if _, err := s.hub.PostAsPerson(ctx, mustUser(t, s, "alice"), conv, fmt.Sprintf("filler %d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	send("A second kiwi crate, later")
	storetest.SearchIndexed(t, s.store)

	home := alice.get("/")
	if !slices.Contains(links(home), "/search") {
		t.Fatalf("the navigation has no link to /search: %v", links(home))
	}
	p := alice.get("/search")
	form := searchForm(t, p)
	if p.status != http.StatusOK || !slices.Contains(form, "q") || len(p.all("article")) != 0 {
		t.Fatalf("the empty search page: %d, fields %v", p.status, form)
	}

	p = alice.get("/search?" + url.Values{"q": {"kiwi crate"}}.Encode())
	hits := p.all("article")
	if p.status != http.StatusOK || len(hits) != 2 {
		t.Fatalf("alice's search: %d with %d hits: %s", p.status, len(hits), p.text())
	}
	var marked []string
	for _, n := range findAll(hits[1], "mark") {
		marked = append(marked, text(n))
	}
	if !slices.Equal(marked, []string{"kiwi", "crate"}) || !strings.Contains(text(hits[1]), "The kiwi crate <b>arrives</b> on Friday") {
		t.Errorf("the older hit marks %v in %q", marked, text(hits[1]))
	}
	wantLinks := []string{"/conversations/" + conv + "#seq-112", "/conversations/" + conv + "?after=0#seq-1"}
	var got []string
	for _, h := range hits {
		got = append(got, attr(findAll(h, "a")[0], "href"))
	}
	if !slices.Equal(got, wantLinks) {
		t.Fatalf("hit links %v, want %v", got, wantLinks)
	}
	for _, link := range wantLinks {
		page := alice.get(link)
		_, anchor, _ := strings.Cut(link, "#")
		if !slices.ContainsFunc(page.all("article"), func(n *html.Node) bool { return attr(n, "id") == anchor }) {
			t.Errorf("%s has no message %s", link, anchor)
		}
	}

	if p := bob.get("/search?q=kiwi"); p.status != http.StatusOK || len(p.all("article")) != 0 || !strings.Contains(p.text(), "No message matches") {
		t.Errorf("bob's search: %d %s", p.status, p.text())
	}

	p = alice.get("/search?" + url.Values{"q": {`"kiwi crate`}}.Encode())
	if p.status != http.StatusBadRequest || !strings.Contains(p.errorText(), "not closed") || !strings.Contains(p.errorText(), fulltext.Syntax) {
		t.Errorf("a query with an unclosed quote: %d %q", p.status, p.errorText())
	}
	for _, in := range p.all("input") {
		if attr(in, "name") == "q" && attr(in, "value") != `"kiwi crate` {
			t.Errorf("the query box holds %q after the refusal", attr(in, "value"))
		}
	}
}

// links lists the hrefs of a page's links.
func links(p *page) []string {
	var out []string
	for _, a := range p.all("a") {
		out = append(out, attr(a, "href"))
	}
	return out
}

// searchForm is the names of the fields of the page's GET form to /search.
func searchForm(t *testing.T, p *page) []string {
	t.Helper()
	for _, f := range p.all("form") {
		if attr(f, "action") == "/search" && strings.EqualFold(attr(f, "method"), "get") {
			var names []string
			for _, in := range findAll(f, "input") {
				names = append(names, attr(in, "name"))
			}
			return names
		}
	}
	t.Fatalf("%s has no GET form to /search; it has %v", p.path(), p.actions())
	return nil
}
