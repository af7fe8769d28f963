package api_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

// TestTestNotification: POST /notifications/test queues one notification
// of kind test to each of the person's devices and topics; with none it is
// refused saying to add one first, and nothing is queued.
func TestTestNotification(t *testing.T) {
	s := newServerOn(t, servertest.Options{Hub: func(o *hub.Options) { o.PrivateHosts = []string{"127.0.0.1"} }})
	code, got := s.rest(t, "alice", "POST", "/notifications/test", nil)
	e, _ := got["error"].(map[string]any)
	if msg, _ := e["message"].(string); code != 400 || e["code"] != "no_targets" || !strings.Contains(msg, "add a device or an ntfy topic first") {
		t.Fatalf("a test with nowhere to go: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/notifications/ntfy", map[string]any{"url": "https://127.0.0.1/alerts"}); code != 200 {
		t.Fatalf("adding a topic: %d %v", code, got)
	}
	if code, got := s.rest(t, "alice", "POST", "/notifications/test", nil); code != 200 || got["queued"] != 1.0 {
		t.Fatalf("a test: %d %v, want 1 queued", code, got)
	}
}

// TestNotifyTargetKinds: PUT /notifications/targets/{id} sets the kinds
// of one device or topic, answering the target; an unknown kind is 400
// naming the kinds, changing nothing; another person's target is not
// found. PUT /notifications with kinds sets them on every target.
func TestNotifyTargetKinds(t *testing.T) {
	s := newServerOn(t, servertest.Options{Hub: func(o *hub.Options) { o.PrivateHosts = []string{"127.0.0.1"} }})
	var ids []string
	for _, topic := range []string{"alerts", "phone"} {
		code, got := s.rest(t, "alice", "POST", "/notifications/ntfy", map[string]any{"url": "https://127.0.0.1/" + topic})
		if code != 200 || len(got["kinds"].([]any)) != len(hub.DefaultNotifyKinds) {
			t.Fatalf("adding a topic: %d %v", code, got)
		}
		ids = append(ids, got["id"].(string))
	}
	kinds := func() map[string]string {
		_, got := s.rest(t, "alice", "GET", "/notifications", nil)
		out := map[string]string{}
		for _, tg := range got["targets"].([]any) {
			tg := tg.(map[string]any)
			var ks []string
			for _, k := range tg["kinds"].([]any) {
				ks = append(ks, k.(string))
			}
			out[tg["id"].(string)] = strings.Join(ks, ",")
		}
		return out
	}
	code, got := s.rest(t, "alice", "PUT", "/notifications/targets/"+ids[0], map[string]any{"kinds": []string{"message", "question"}})
	if code != 200 || got["id"] != ids[0] || len(got["kinds"].([]any)) != 2 {
		t.Fatalf("setting kinds: %d %v", code, got)
	}
	want := map[string]string{ids[0]: "question,message", ids[1]: strings.Join(hub.DefaultNotifyKinds, ",")}
	if got := kinds(); got[ids[0]] != want[ids[0]] || got[ids[1]] != want[ids[1]] {
		t.Fatalf("kinds %v; want %v", got, want)
	}
	code, got = s.rest(t, "alice", "PUT", "/notifications/targets/"+ids[0], map[string]any{"kinds": []string{"gossip"}})
	if e, _ := got["error"].(map[string]any); code != 400 || !strings.Contains(e["message"].(string), "choose from question, held") {
		t.Fatalf("an unknown kind: %d %v", code, got)
	}
	if code, got := s.rest(t, "bob", "PUT", "/notifications/targets/"+ids[0], map[string]any{"kinds": []string{}}); code != 404 {
		t.Fatalf("bob set alice's kinds: %d %v", code, got)
	}
	if got := kinds(); got[ids[0]] != want[ids[0]] {
		t.Fatalf("refused calls changed the kinds to %v", got)
	}
	if code, got := s.rest(t, "alice", "PUT", "/notifications", map[string]any{"kinds": []string{"held"}}); code != 200 {
		t.Fatalf("kinds for every target: %d %v", code, got)
	}
	if got := kinds(); got[ids[0]] != "held" || got[ids[1]] != "held" {
		t.Fatalf("kinds for every target: %v", got)
	}
}
