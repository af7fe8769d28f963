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
