package web_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// reopenable is a database a test can open again after closing it, as a
// server restarting does: a SQLite file, or a PostgreSQL schema.
func reopenable(t *testing.T) func() *store.DB {
	t.Helper()
	database := filepath.Join(t.TempDir(), "palaver.db")
	if os.Getenv(storetest.EnvStore) == "postgres" {
		database = storetest.Schema(t)
	}
	return func() *store.DB {
		db, err := store.Open(ctx, store.Options{Database: database, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}

// within runs actions with a deadline of d: the browser must get there
// that soon.
func (b *tab) within(d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	c, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		b.t.Fatalf("%s: not within %s: %v", what, d, err)
	}
}

// evaluate runs a script in the tab and returns its value.
func evaluate[T any](b *tab, script string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](script))
	if err != nil {
		b.t.Fatalf("in the browser: %s: %v", script, err)
	}
	return v
}

// row is the XPath of a Bridge row holding text.
func row(text string) string {
	return `//ol[@id='activity']/li[contains(., '` + text + `')]`
}

// TestBrowserBridge: while the Bridge is open, an agent's send, a held
// message, a tripped brake and a question each appear on it within a
// second, without a reload, and the approval count follows (it is read
// again after each row, so it is given longer on a busy machine); after the
// server restarts, what happened while it was down arrives exactly once,
// and nothing shown before comes again.
func TestBrowserBridge(t *testing.T) {
	chromium(t)
	open := reopenable(t)
	db := open()
	s := serveSite(t, db, nil)
	addr := strings.TrimPrefix(s.url, "http://")
	b := newTab(t, s, true)
	s.hub.CreateUser(ctx, "alice", "Alice")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	_, plannerToken := s.agent(t, "alice/planner")
	s.agent(t, "alice/reviewer")
	planner := s.reauth(t, plannerToken)
	v, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	conv := v.Conversation.ID
	send := func(body string) error {
		_, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: body, Instance: "laptop"})
		return err
	}

	b.open("/signin", "signin")
	b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
		chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
		b.at("home"))
	// Count every row the stream sends, so a row sent twice is seen even
	// where the page would not show it twice.
	evaluate[any](b, `window.sent = {}; document.addEventListener("htmx:sseBeforeMessage", function (e) {
		var m = /id="(ev-\d+)"/.exec(e.detail.data || ""); if (m) window.sent[m[1]] = (window.sent[m[1]] || 0) + 1; })`)
	b.waitText(byID("activity-heading"), "Activity")
	b.do(chromedp.WaitVisible(chromedp.CSS(`.live[sse-connect*="cursor="]`)))

	if err := send("Please review the retry logic"); err != nil {
		t.Fatal(err)
	}
	b.within(time.Second, "the send", chromedp.WaitVisible(chromedp.Search(row("Please review the retry logic"))))

	if _, err := s.hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner = s.reauth(t, plannerToken)
	if err := send("Shall I tag v2.0?"); err != nil {
		t.Fatal(err)
	}
	b.within(time.Second, "the held message", chromedp.WaitVisible(chromedp.Search(row("Shall I tag v2.0?")+`[contains(., 'held')]`)))
	b.within(10*time.Second, "the approval count", chromedp.WaitVisible(chromedp.Search(byID("waiting")+`[normalize-space(.)='1']`)))

	if _, err := s.hub.SetAgentMode(ctx, "alice/planner", hub.ModeActive); err != nil {
		t.Fatal(err)
	}
	planner = s.reauth(t, plannerToken)
	if err := send("Please review the retry logic"); err != nil {
		t.Fatal(err)
	}
	if r, ok := send("Please review the retry logic").(*hub.Refusal); !ok || r.Word() != "duplicate" {
		t.Fatalf("the third identical send: %v, want the duplicate brake", r)
	}
	b.within(time.Second, "the brake", chromedp.WaitVisible(chromedp.Search(row("brake: duplicate")+`[contains(., 'alice/planner')]`)))

	if _, err := s.hub.AskOwner(ctx, planner, "Tag the release v2.0 or v2.0.0?", "laptop", conv, nil); err != nil {
		t.Fatal(err)
	}
	b.within(time.Second, "the question", chromedp.WaitVisible(chromedp.Search(row("Tag the release v2.0 or v2.0.0?")+`//a[.='Answer']`)))
	b.within(10*time.Second, "the approval count", chromedp.WaitVisible(chromedp.Search(byID("waiting")+`[normalize-space(.)='2']`)))
	// The session the planner named is listed under it, with what it
	// last did.
	b.do(chromedp.WaitVisible(chromedp.Search(byID("agents-list") + `//ul[@class='instances']/li[contains(., 'laptop')][contains(., 'asked you a question')]`)))
	b.screenshot("bridge")

	// The server stops; while it is down its agent writes (through a hub
	// on the same database, before anything listens again); it comes back
	// on the same address, and the page's stream resumes from its cursor.
	s.stop()
	db.Close()
	db = open()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s2 := serveSite(t, db, nil)
	planner = s2.reauth(t, plannerToken)
	if _, err := s2.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "Written while you were away", Instance: "laptop"}); err != nil {
		t.Fatal(err)
	}
	s2.stop()
	s3 := serveSite(t, db, ln)
	planner = s3.reauth(t, plannerToken)
	b.do(chromedp.WaitVisible(chromedp.Search(row("Written while you were away"))))
	if _, err := s3.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv, Body: "And after the restart", Instance: "laptop"}); err != nil {
		t.Fatal(err)
	}
	b.within(time.Second, "a send after the restart", chromedp.WaitVisible(chromedp.Search(row("And after the restart"))))

	texts := evaluate[[]string](b, `Array.from(document.querySelectorAll("#activity > li .row-text")).map(function (p) { return p.textContent })`)
	sent := evaluate[map[string]int](b, `window.sent`)
	want := []string{"And after the restart", "Written while you were away", "Tag the release v2.0 or v2.0.0?",
		"duplicate: ", "Please review the retry logic", "Shall I tag v2.0?", "Please review the retry logic"}
	if len(texts) != len(want) {
		t.Fatalf("the Bridge's rows: %q, want %q", texts, want)
	}
	for i := range want {
		if !strings.HasPrefix(texts[i], want[i]) {
			t.Fatalf("the Bridge's rows: %q, want %q", texts, want)
		}
	}
	if len(sent) != len(want) {
		t.Errorf("the stream sent rows %v, want %d", sent, len(want))
	}
	for id, n := range sent {
		if n != 1 {
			t.Errorf("the stream sent row %s %d times", id, n)
		}
	}
}
