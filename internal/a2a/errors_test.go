package a2a

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestTranslateTable lists every hub error kind, and the refusals, against
// the A2A face's one translation (CONVENTIONS "Errors"): each has its
// JSON-RPC code, the hub's message (an internal one only its trace) and a
// trace id in data.
func TestTranslateTable(t *testing.T) {
	want := map[hub.Kind]int{
		hub.KindInternal: codeInternal, hub.KindNotFound: codeTaskNotFound, hub.KindInvalid: codeInvalidParams,
		hub.KindConflict: codeRefused, hub.KindForbidden: codeRefused, hub.KindUnauthenticated: codeRefused, hub.KindRateLimited: codeRefused,
	}
	c := &call{s: &Server{log: slog.New(slog.DiscardHandler)}, r: httptest.NewRequest("POST", "/a2a/alice/reviewer", nil), method: "message/send"}
	ctx := context.Background()
	for _, k := range hub.Kinds {
		e := c.translate(ctx, &hub.Error{Kind: k, Msg: "what to do"})
		trace, _ := e.Data["trace"].(string)
		msg := "what to do"
		if k == hub.KindInternal {
			msg = "internal error (trace " + trace + "); retry later, and quote the trace when reporting it"
		}
		if e.Code != want[k] || e.Message != msg || !strings.HasPrefix(trace, "tr_") || e.Data["error"] != msg {
			t.Errorf("%v: %+v, want code %d, message %q and a trace", k, e, want[k], msg)
		}
	}
	if e := c.translate(ctx, &hub.Error{Kind: hub.KindConflict, Code: "not_cancelable", Msg: "no"}); e.Code != codeNotCancelable {
		t.Errorf("not cancelable: %+v, want %d", e, codeNotCancelable)
	}
	for _, status := range []string{hub.StatusDenied, hub.StatusPendingApproval} {
		e := c.translate(ctx, &hub.Refusal{Status: status, Reason: "budget: you sent 60 messages here in the last hour"})
		trace, _ := e.Data["trace"].(string)
		if e.Code != codeDenied || e.Message != "budget: you sent 60 messages here in the last hour (trace "+trace+")" || e.Data["brake"] != "budget" || e.Data["status"] != status {
			t.Errorf("a %s refusal: %+v", status, e)
		}
	}
}
