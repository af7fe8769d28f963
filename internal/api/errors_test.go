package api

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestWriteErrorTable lists every hub error kind against the REST face's
// one translation (CONVENTIONS "Errors").
func TestWriteErrorTable(t *testing.T) {
	want := map[hub.Kind]int{
		hub.KindInternal: 500, hub.KindNotFound: 404, hub.KindInvalid: 400, hub.KindConflict: 409,
		hub.KindForbidden: 403, hub.KindUnauthenticated: 401, hub.KindRateLimited: 429,
	}
	a := &API{log: slog.New(slog.DiscardHandler)}
	for _, k := range hub.Kinds {
		w := httptest.NewRecorder()
		a.writeError(w, httptest.NewRequest(http.MethodGet, "/api/v1/me", nil), &hub.Error{Kind: k, Msg: "what to do"})
		var body struct {
			Error map[string]string `json:"error"`
			Trace string            `json:"trace"`
		}
		json.NewDecoder(w.Body).Decode(&body)
		if w.Code != want[k] || body.Error["code"] != k.String() || body.Trace == "" {
			t.Errorf("%v: %d %+v, want %d with code %s and a trace", k, w.Code, body, want[k], k)
		}
	}
	w := httptest.NewRecorder()
	a.writeError(w, httptest.NewRequest(http.MethodGet, "/api/v1/events", nil), &hub.Error{Kind: hub.KindRateLimited, Code: "too_many_waits", Msg: "wait", Details: map[string]any{"retry_after_s": 5}})
	if w.Code != 429 || w.Header().Get("Retry-After") != "5" || !strings.Contains(w.Body.String(), `"retry_after_s":5`) {
		t.Errorf("a rate limit with a retry: %d %v %s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	a.writeError(w, httptest.NewRequest(http.MethodGet, "/", nil), &hub.Refusal{Status: "pending_approval", Reason: "pending_approval: asked"})
	if w.Code != http.StatusConflict {
		t.Errorf("a refusal: %d, want 409", w.Code)
	}
}

// TestHintsNameRoutes: every action a hub hint names has a route here,
// and a hinted error's message points at it, not at a command line.
func TestHintsNameRoutes(t *testing.T) {
	for _, name := range hub.Actions {
		if way := restWay(hub.Action{Name: name}); !strings.Contains(way, "/api/v1/") || strings.Contains(way, "palaver ") {
			t.Errorf("%s: the REST way is %q", name, way)
		}
	}
	a := &API{log: slog.New(slog.DiscardHandler)}
	w := httptest.NewRecorder()
	a.writeError(w, httptest.NewRequest(http.MethodPost, "/api/v1/approvals/x/approve", nil), &hub.Error{Kind: hub.KindNotFound,
		Msg:  "no message is held",
		Hint: &hub.Hint{Lead: "list them", Action: hub.Action{Name: hub.ActionListApprovals, Args: map[string]string{"user": "alice"}}}})
	var body struct{ Error map[string]string }
	json.NewDecoder(w.Body).Decode(&body)
	if want := "no message is held; list them with: GET /api/v1/approvals"; w.Code != 404 || body.Error["message"] != want {
		t.Errorf("a hinted error: %d %q, want 404 %q", w.Code, body.Error["message"], want)
	}
}
