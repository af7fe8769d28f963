package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestServeErrorTable lists every hub error kind against the dashboard's
// one translation (CONVENTIONS "Errors"): a page with the kind's status
// and its message (internal errors show only a trace), or after a form,
// back to its page with the message; not signed in, to sign in.
func TestServeErrorTable(t *testing.T) {
	want := map[hub.Kind]int{
		hub.KindInternal: 500, hub.KindNotFound: 404, hub.KindInvalid: 400, hub.KindConflict: 409,
		hub.KindForbidden: 403, hub.KindUnauthenticated: 401, hub.KindRateLimited: 429,
	}
	log := slog.New(slog.DiscardHandler)
	h, err := hub.New(context.Background(), hub.Options{Store: storetest.Open(t), Waker: notify.NewLocal(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Hub: h, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	signedIn, err := h.CreateUser(context.Background(), "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range hub.Kinds {
		rec := httptest.NewRecorder()
		r := &request{Request: httptest.NewRequest(http.MethodGet, "/agents", nil), user: signedIn}
		w.serveError(rec, r, &hub.Error{Kind: k, Msg: "what to do", Err: errSecret}, "")
		body := rec.Body.String()
		shown := strings.Contains(body, "what to do")
		if rec.Code != want[k] || shown == (k == hub.KindInternal) || strings.Contains(body, errSecret.Error()) {
			t.Errorf("%v: %d, message shown %v; want %d, the message unless internal, never the cause", k, rec.Code, shown, want[k])
		}
		rec = httptest.NewRecorder()
		r = &request{Request: httptest.NewRequest(http.MethodPost, "/agents", nil), user: signedIn}
		w.serveError(rec, r, &hub.Error{Kind: k, Msg: "what to do"}, "/agents")
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/agents" || !strings.Contains(rec.Header().Get("Set-Cookie"), "palaver_flash=") {
			t.Errorf("%v after a form: %d to %q", k, rec.Code, rec.Header().Get("Location"))
		}
	}
	rec := httptest.NewRecorder()
	w.serveError(rec, &request{Request: httptest.NewRequest(http.MethodPost, "/conversations/x/messages", nil), user: signedIn},
		&hub.Refusal{Status: hub.StatusDenied, Reason: "closing: it is closing"}, "/conversations/x")
	if rec.Code != http.StatusSeeOther {
		t.Errorf("a refusal after a form: %d", rec.Code)
	}
}

var errSecret = &secretError{}

type secretError struct{}

func (*secretError) Error() string { return "driver: password=hunter2" }

// TestHintsNamePages: every action a hub hint names has a page here, and a
// hinted error's message points at it, not at a command line.
func TestHintsNamePages(t *testing.T) {
	for _, name := range hub.Actions {
		if way := pageWay(hub.Action{Name: name}); way == "from the menu" || strings.Contains(way, "palaver ") {
			t.Errorf("%s: the dashboard's way is %q", name, way)
		}
	}
}
