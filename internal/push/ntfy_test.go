package push_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/push/pushtest"
)

// TestParseNtfyTopic: a topic URL is split into the server's root and the
// topic; one that ntfy could not take is refused saying why.
func TestParseNtfyTopic(t *testing.T) {
	for _, tc := range []struct {
		raw, server, topic, why string
	}{
		{raw: "https://ntfy.sh/my-alerts", server: "https://ntfy.sh/", topic: "my-alerts"},
		{raw: "https://ntfy.example.com:8443/palaver_alice", server: "https://ntfy.example.com:8443/", topic: "palaver_alice"},
		{raw: "https://example.com/ntfy/Alerts2", server: "https://example.com/ntfy/", topic: "Alerts2"},
		{raw: "http://ntfy.sh/my-alerts", why: "is not https"},
		{raw: "ntfy.sh/my-alerts", why: "is not an absolute URL"},
		{raw: "https://ntfy.sh/", why: "does not end in a topic name of 1–64 letters, digits, - and _"},
		{raw: "https://ntfy.sh", why: "does not end in a topic name of 1–64 letters, digits, - and _"},
		{raw: "https://ntfy.sh/my alerts", why: "does not end in a topic name of 1–64 letters, digits, - and _"},
		{raw: "https://ntfy.sh/my-alerts/", why: "does not end in a topic name of 1–64 letters, digits, - and _"},
		{raw: "https://ntfy.sh/" + strings.Repeat("a", 65), why: "does not end in a topic name of 1–64 letters, digits, - and _"},
		{raw: "https://phil:secret@ntfy.sh/my-alerts", why: "has a user name in it (give an access token instead)"},
		{raw: "https://ntfy.sh/my-alerts?auth=x", why: "has a query or a fragment"},
		{raw: "https://ntfy.sh/my-alerts#x", why: "has a query or a fragment"},
	} {
		got, err := push.ParseNtfyTopic(tc.raw)
		if tc.why != "" {
			want := "an ntfy topic URL is https://server/topic, like https://ntfy.sh/my-alerts: " + `"` + tc.raw + `" ` + tc.why
			if err == nil || err.Error() != want {
				t.Errorf("ParseNtfyTopic(%q) = %+v, %v; want %q", tc.raw, got, err, want)
			}
			continue
		}
		if want := (push.NtfyTopic{Server: tc.server, Topic: tc.topic}); err != nil || got != want {
			t.Errorf("ParseNtfyTopic(%q) = %+v, %v; want %+v", tc.raw, got, err, want)
		}
	}
}

// TestPublishNtfy: a notification is a JSON POST to the server's root with
// ntfy's fields — topic, title, the summary as message, the priority as
// 2/3/4, tags, the link as click, the action as a view button and the id
// as sequence_id — and the token as a bearer; the answer's status comes
// back.
func TestPublishNtfy(t *testing.T) {
	ntfy := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	s := world(ntfy)
	target := push.NtfyTarget{URL: ntfy.URL + "/palaver-alice", Token: "tk_0123456789abcdefghijklmnopqrs"}
	n := push.Notification{ID: "appr_0123456789abcdefghjkmnpqrs", Title: "alice/planner asks permission", Summary: "Bash: rm -rf build/",
		Link: "https://hub.example.com/approvals", Priority: push.PriorityHigh, Tags: []string{"lock", "robot"},
		Action: &push.Action{Label: "Decide", URL: "https://hub.example.com/approvals/perm_1"}}
	res := s.PublishNtfy(context.Background(), target, n, admitted("ntfy.test"))
	if !res.Delivered() || res.Status != http.StatusOK || res.Err != nil || res.Gone {
		t.Fatalf("PublishNtfy = %+v", res)
	}
	r := ntfy.Last(t)
	if r.Method != http.MethodPost || r.Path != "/" || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Authorization") != "Bearer tk_0123456789abcdefghijklmnopqrs" || !strings.HasPrefix(r.Header.Get("User-Agent"), "Palaver/") {
		t.Errorf("%s %s, Content-Type %q, Authorization %q, User-Agent %q", r.Method, r.Path, r.Header.Get("Content-Type"),
			r.Header.Get("Authorization"), r.Header.Get("User-Agent"))
	}
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("the body %q: %v", r.Body, err)
	}
	want := map[string]any{"topic": "palaver-alice", "title": "alice/planner asks permission", "message": "Bash: rm -rf build/",
		"priority": 4.0, "tags": []any{"lock", "robot"}, "click": "https://hub.example.com/approvals",
		"actions":     []any{map[string]any{"action": "view", "label": "Decide", "url": "https://hub.example.com/approvals/perm_1"}},
		"sequence_id": "appr_0123456789abcdefghjkmnpqrs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the body (-want +got):\n%s", diff)
	}

	// Each priority is its ntfy priority; without a summary, the title is
	// the message (ntfy would show "triggered"); without a token, no
	// Authorization; a server under a path is posted to at that path.
	under := push.NtfyTarget{URL: ntfy.URL + "/ntfy/alerts"}
	for p, want := range map[push.Priority]float64{"": 3, push.PriorityLow: 2, push.PriorityNormal: 3, push.PriorityHigh: 4} {
		if res := s.PublishNtfy(context.Background(), under, push.Notification{Title: "t", Priority: p}, admitted("ntfy.test")); !res.Delivered() {
			t.Fatalf("PublishNtfy = %+v", res)
		}
		r := ntfy.Last(t)
		var got map[string]any
		json.Unmarshal(r.Body, &got)
		if diff := cmp.Diff(map[string]any{"topic": "alerts", "title": "t", "message": "t", "priority": want}, got); diff != "" || r.Path != "/ntfy/" ||
			r.Header.Values("Authorization") != nil {
			t.Errorf("priority %q: %s, Authorization %q, body (-want +got):\n%s", p, r.Path, r.Header.Get("Authorization"), diff)
		}
	}

	// A refusal is an answer, for the hub to retry; ntfy has no "gone".
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusTooManyRequests, http.StatusInternalServerError} {
		ntfy.Answer(status)
		res := s.PublishNtfy(context.Background(), target, n, admitted("ntfy.test"))
		ntfy.Last(t)
		if res.Status != status || res.Err != nil || res.Delivered() || res.Gone {
			t.Errorf("an answer of %d: %+v", status, res)
		}
	}
}

// TestNtfyEgress: an ntfy server whose name resolves to a private address
// is refused before any connection unless the admin let its host through;
// a bad topic URL or notification sends nothing.
func TestNtfyEgress(t *testing.T) {
	ntfy := pushtest.NewService(t, "ntfy.test", http.StatusOK)
	s := world(ntfy)
	target := push.NtfyTarget{URL: ntfy.URL + "/alerts"}
	n := push.Notification{Title: "t"}

	res := s.PublishNtfy(context.Background(), target, n, egress.NewPolicy(nil).Allows("ntfy.test"))
	var refused *egress.RefusedError
	if !errors.As(res.Err, &refused) || res.Status != 0 ||
		egress.Describe(res.Err) != "its host is at 127.0.0.1, a loopback address (127.0.0.0/8), which this server does not call" {
		t.Errorf("a private address: %+v (%q); want refused", res, egress.Describe(res.Err))
	}
	if res := s.PublishNtfy(context.Background(), push.NtfyTarget{URL: "http://ntfy.test/alerts"}, n, admitted("ntfy.test")); res.Err == nil {
		t.Errorf("an http topic URL: %+v", res)
	}
	if res := s.PublishNtfy(context.Background(), target, push.Notification{}, admitted("ntfy.test")); res.Err == nil || res.Err.Error() != "a notification needs a title" {
		t.Errorf("a notification without a title: %+v", res)
	}
	if got := ntfy.Requests(); len(got) != 0 {
		t.Fatalf("the ntfy server took %d requests from refused calls", len(got))
	}
	if res := s.PublishNtfy(context.Background(), target, n, admitted("ntfy.test")); !res.Delivered() {
		t.Errorf("the admin's host: %+v", res)
	}
	ntfy.Last(t)
}
