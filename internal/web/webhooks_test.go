package web_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/webhook"
)

// TestWebhookPages: on the agent's page an owner adds a webhook (http and
// private addresses refused), sees its secret once, sees a disabled one
// with why and its delivery log, turns it on again and removes it.
func TestWebhookPages(t *testing.T) {
	db := storetest.Open(t)
	s := serveSite(t, db, nil)
	b := s.person(t, "alice")
	b.submit(b.get("/agents"), "/agents", url.Values{"slug": {"planner"}, "description": {"Plans"}})
	p := b.get("/agents/planner")
	if !strings.Contains(p.text(), "No webhooks.") {
		t.Fatalf("the agent's page: %s", p.text())
	}
	for u, want := range map[string]string{"http://93.184.215.14/hook": "not https", "https://192.168.0.9/hook": "private"} {
		if p = b.submit(b.get("/agents/planner"), "/agents/planner/webhooks", url.Values{"url": {u}}); !strings.Contains(p.errorText(), want) {
			t.Errorf("adding %s: %q; want it refused as %q", u, p.errorText(), want)
		}
	}
	p = b.submit(b.get("/agents/planner"), "/agents/planner/webhooks", url.Values{"url": {"https://93.184.215.14/hook"}})
	secret := secretOn(t, p, "secret")
	if !strings.HasPrefix(secret, "whsec_") || !strings.Contains(p.text(), "shown this once") {
		t.Fatalf("the new webhook's page: %s", p.text())
	}
	// Reloading the form's address leads back to the agent, never the secret.
	p = b.get("/agents/planner/webhooks")
	if p.path() != "/agents/planner" || strings.Contains(p.raw, secret) || !strings.Contains(p.text(), "https://93.184.215.14/hook") || !strings.Contains(p.text(), "No call yet.") {
		t.Fatalf("the agent's page after adding: at %s, shows the secret %v: %s", p.path(), strings.Contains(p.raw, secret), p.text())
	}

	// A day of failures turned it off: the page says when and why, and
	// shows the log.
	alice, _ := s.hub.User(ctx, "alice")
	views, err := s.hooks.List(ctx, alice, "planner")
	if err != nil || len(views) != 1 {
		t.Fatal(views, err)
	}
	id := views[0].ID
	now := time.Now()
	if err := db.Update(ctx, func(tx hub.Tx) error {
		if err := tx.InsertWebhookAttempt(ctx, &hub.WebhookAttempt{ID: "wha_1", WebhookID: id, CallID: "whc_1", Type: hub.EventMessageNew,
			At: now, Status: 503, Duration: 42 * time.Millisecond}, webhook.LogSize); err != nil {
			return err
		}
		return tx.SetWebhookDisabled(ctx, id, now, "its calls failed for 24 hours; the last: it was answered 503")
	}); err != nil {
		t.Fatal(err)
	}
	p = b.get("/agents/planner")
	for _, want := range []string{"off", "its calls failed for 24 hours; the last: it was answered 503", "message.new", "failed: it was answered 503", "42 ms", "whc_1"} {
		if !strings.Contains(p.text(), want) {
			t.Errorf("the disabled webhook's part of the page has no %q: %s", want, p.text())
		}
	}
	p = b.submit(p, "/agents/planner/webhooks/"+id+"/enable", nil)
	if !strings.Contains(p.notice(), "on again") {
		t.Errorf("turning it on: %q %q", p.notice(), p.errorText())
	}
	if vs, _ := s.hooks.List(ctx, alice, "planner"); !vs[0].Enabled() {
		t.Error("still off")
	}

	bob := s.person(t, "bob")
	if p := bob.post("/agents/planner/webhooks/"+id+"/remove", nil); p.status != 404 {
		t.Errorf("bob removes alice's webhook: %d", p.status)
	}
	p = b.submit(b.get("/agents/planner"), "/agents/planner/webhooks/"+id+"/remove", nil)
	if !strings.Contains(p.notice(), "Removed the webhook") || !strings.Contains(p.text(), "No webhooks.") {
		t.Errorf("removing: %q %q", p.notice(), p.errorText())
	}
}
