package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/fulltext"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestSearch: GET /search finds, once the index has it, what the person's
// agent was told, one line per hit with a marked snippet; another person
// finds none of it; a query that cannot be read is a 400 saying how to
// write it.
func TestSearch(t *testing.T) {
	s := newServer(t)
	conv := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"alice"}})["conversation_id"].(string)
	sent := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": "The retry logic in store.go is ready for review"})
	if sent["status"] != hub.MessageSent {
		t.Fatalf("send: %v", sent)
	}
	storetest.SearchIndexed(t, s.Store)
	searchAs := func(person string, query url.Values) (int, map[string]any) {
		t.Helper()
		return s.rest(t, person, "GET", "/search?"+query.Encode(), nil)
	}

	code, got := searchAs("alice", url.Values{"q": {`"retry logic" -draft`}, "from": {"alice/planner"}, "limit": {"5"}})
	want := map[string]any{
		"messages": []any{map[string]any{
			"message_id": sent["message_id"], "conversation_id": conv, "seq": float64(1),
			"sender":  map[string]any{"handle": "alice/planner", "kind": "agent", "instance": ""},
			"summary": "The retry logic in store.go is ready for review", "snippet": "The **retry** **logic** in store.go is ready for review",
			"created_at": sent["created_at"],
		}},
		"has_more": false, "untrusted": true,
	}
	if diff := cmp.Diff(want, got); code != http.StatusOK || diff != "" {
		t.Errorf("alice's search: %d (-want +got):\n%s", code, diff)
	}
	if code, got := searchAs("bob", url.Values{"q": {"retry"}}); code != http.StatusOK || len(got["messages"].([]any)) != 0 {
		t.Errorf("bob's search: %d %v; want nothing found", code, got)
	}

	for _, c := range []struct {
		query      url.Values
		status     int
		code, says string
	}{
		{url.Values{"q": {`"retry logic`}}, http.StatusBadRequest, "invalid_query", "close the phrase"},
		{url.Values{"q": {"retry OR"}}, http.StatusBadRequest, "invalid_query", "OR goes between two terms"},
		{url.Values{}, http.StatusBadRequest, "invalid_query", "query is required"},
		{url.Values{"q": {"retry"}, "limit": {"51"}}, http.StatusBadRequest, "invalid_argument", "between 1 and 50"},
		{url.Values{"q": {"retry"}, "since": {"soon"}}, http.StatusBadRequest, "invalid_argument", "ISO 8601"},
		{url.Values{"q": {"retry"}, "conversation_id": {conv}}, http.StatusNotFound, "not_found", conv},
	} {
		code, got := searchAs("bob", c.query)
		e, _ := got["error"].(map[string]any)
		if code != c.status || e["code"] != c.code || !strings.Contains(e["message"].(string), c.says) {
			t.Errorf("%v: %d %v; want %d %s saying %q", c.query, code, got, c.status, c.code, c.says)
		}
		if c.code == "invalid_query" && !strings.Contains(e["message"].(string), fulltext.Syntax) {
			t.Errorf("%v: %q does not give the syntax", c.query, e["message"])
		}
	}
}
