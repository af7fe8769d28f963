package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWebhookRoutes: an owner adds an endpoint (its secret shown once),
// lists it with its log, and removes it; http and private addresses are
// refused; another person's agent's endpoints are not found.
func TestWebhookRoutes(t *testing.T) {
	s := newServer(t)
	for url, want := range map[string]string{
		"http://93.184.215.14/hook":     "not https",
		"https://10.0.0.7/hook":         "private",
		"https://127.0.0.1:8443/hook":   "private",
		"https://[fe80::1]/hook":        "private",
		"https://u:p@93.184.215.14/x":   "user info",
		"ftp://93.184.215.14/hook":      "not https",
		"https://93.184.215.14/x#where": "fragment",
	} {
		code, got := s.rest(t, "alice", "POST", "/agents/planner/webhooks", map[string]any{"url": url})
		e, _ := got["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != http.StatusBadRequest || e["code"] != "invalid_argument" || !strings.Contains(msg, want) {
			t.Errorf("POST %s: %d %v; want 400 saying %q", url, code, got, want)
		}
	}
	code, added := s.rest(t, "alice", "POST", "/agents/planner/webhooks", map[string]any{"url": "https://93.184.215.14/hook"})
	secret, _ := added["secret"].(string)
	id, _ := added["id"].(string)
	if code != 200 || !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(id, "wh_") || added["enabled"] != true || added["url"] != "https://93.184.215.14/hook" {
		t.Fatalf("adding: %d %v", code, added)
	}

	code, list := s.rest(t, "alice", "GET", "/agents/planner/webhooks", nil)
	hooks, _ := list["webhooks"].([]any)
	if code != 200 || len(hooks) != 1 {
		t.Fatalf("the list: %d %v", code, list)
	}
	hook := hooks[0].(map[string]any)
	if hook["id"] != id || hook["secret"] != nil || hook["pending"] != float64(0) || hook["attempts"] == nil {
		t.Errorf("a listed webhook: %v; want it without its secret, with its log", hook)
	}
	if code, detail := s.rest(t, "alice", "GET", "/agents/planner", nil); code != 200 || len(detail["webhooks"].([]any)) != 1 {
		t.Errorf("the agent's detail: %d %v", code, detail["webhooks"])
	}
	if code, got := s.rest(t, "alice", "POST", "/agents/planner/webhooks/"+id+"/enable", nil); code != 200 || got["enabled"] != true {
		t.Errorf("enabling an enabled webhook: %d %v", code, got)
	}

	for _, tc := range []struct{ method, path string }{
		{"GET", "/agents/planner/webhooks"},
		{"POST", "/agents/planner/webhooks"},
		{"DELETE", "/agents/helper/webhooks/" + id},
		{"POST", "/agents/helper/webhooks/" + id + "/enable"},
		{"DELETE", "/agents/alice/planner/webhooks/" + id},
	} {
		var body any
		if tc.method == "POST" && strings.HasSuffix(tc.path, "/webhooks") {
			body = map[string]any{"url": "https://93.184.215.14/bob"}
		}
		if code, got := s.rest(t, "bob", tc.method, tc.path, body); code != http.StatusNotFound {
			t.Errorf("bob: %s %s = %d %v, want 404", tc.method, tc.path, code, got)
		}
	}

	if code, got := s.rest(t, "alice", "DELETE", "/agents/planner/webhooks/"+id, nil); code != 200 || got["removed"] != true {
		t.Errorf("removing: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "DELETE", "/agents/planner/webhooks/"+id, nil); code != http.StatusNotFound {
		t.Errorf("removing again: %d %v", code, got)
	}
}
