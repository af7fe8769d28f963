package a2a

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestTranslateTable10 lists every hub error kind, and the refusals,
// against the one translation as A2A 1.0 answers it (errorOf10): the code
// and message of 0.3's, and 0.3's data as one google.rpc.ErrorInfo — A2A's
// reason for A2A's codes, Palaver's for its own — with every value a
// string and no copy of the message.
func TestTranslateTable10(t *testing.T) {
	c := &call{s: &Server{log: slog.New(slog.DiscardHandler)}, r: httptest.NewRequest("POST", "/a2a/alice/reviewer", nil), method: "SendMessage", version: Version10}
	ctx := context.Background()
	info := func(reason, domain string, meta map[string]string) []ErrorInfo {
		return []ErrorInfo{{Type: "type.googleapis.com/google.rpc.ErrorInfo", Reason: reason, Domain: domain, Metadata: meta}}
	}
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		reason string
		domain string
		meta   map[string]string // but the trace, which every one has
	}{
		{"internal", &hub.Error{Kind: hub.KindInternal, Msg: "x"}, -32603, "INTERNAL", "palaver", map[string]string{"code": "internal"}},
		{"not found", &hub.Error{Kind: hub.KindNotFound, Msg: "no task"}, -32001, "TASK_NOT_FOUND", "a2a-protocol.org", map[string]string{"code": "not_found"}},
		{"invalid", &hub.Error{Kind: hub.KindInvalid, Code: "summary_required", Msg: "a summary"}, -32602, "INVALID_PARAMS", "a2a-protocol.org", map[string]string{"code": "summary_required"}},
		{"conflict", &hub.Error{Kind: hub.KindConflict, Msg: "no"}, -32011, "CONFLICT", "palaver", map[string]string{"code": "conflict"}},
		{"not cancelable", &hub.Error{Kind: hub.KindConflict, Code: "not_cancelable", Msg: "no"}, -32002, "TASK_NOT_CANCELABLE", "a2a-protocol.org", map[string]string{"code": "not_cancelable"}},
		{"forbidden", &hub.Error{Kind: hub.KindForbidden, Code: "missing_scope", Msg: "needs msg:write"}, -32011, "MISSING_SCOPE", "palaver", map[string]string{"code": "missing_scope"}},
		{"unauthenticated", &hub.Error{Kind: hub.KindUnauthenticated, Msg: "who"}, -32011, "UNAUTHENTICATED", "palaver", map[string]string{"code": "unauthenticated"}},
		{"rate limited", &hub.Error{Kind: hub.KindRateLimited, Code: "too_many_waits", Msg: "wait", Details: map[string]any{"retry_after_s": 5}}, -32011, "TOO_MANY_WAITS", "palaver", map[string]string{"code": "too_many_waits", "retry_after_s": "5"}},
		{"denied", &hub.Refusal{Status: hub.StatusDenied, Reason: "budget: you sent 60 messages here in the last hour"}, -32010, "DENIED", "palaver",
			map[string]string{"status": "denied", "brake": "budget", "reason": "budget: you sent 60 messages here in the last hour"}},
		{"pending approval", &hub.Refusal{Status: hub.StatusPendingApproval, Reason: "inbound: bob has not let you in yet"}, -32010, "PENDING_APPROVAL", "palaver",
			map[string]string{"status": "pending_approval", "brake": "inbound", "reason": "inbound: bob has not let you in yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rerr := c.translate(ctx, tc.err)
			got := errorOf10(rerr)
			if len(got.Data) != 1 || got.Data[0].Metadata["trace"] == "" {
				t.Fatalf("%+v: want one detail with a trace", got)
			}
			tc.meta["trace"] = got.Data[0].Metadata["trace"]
			want := &rpcError10{Code: tc.code, Message: rerr.Message, Data: info(tc.reason, tc.domain, tc.meta)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// An error of the face's own carries A2A's reason when it has one, and
	// no data when it has none.
	if got := errorOf10(&rpcError{Code: codeContentType, Message: "only text"}); cmp.Diff(&rpcError10{Code: codeContentType, Message: "only text", Data: info("CONTENT_TYPE_NOT_SUPPORTED", "a2a-protocol.org", nil)}, got) != "" {
		t.Errorf("content type: %+v", got)
	}
	if got := errorOf10(&rpcError{Code: codeMethodNotFound, Message: "no method"}); got.Data != nil {
		t.Errorf("method not found: %+v, want no data", got)
	}
}

// TestStates10: every task state of the hub has its A2A 1.0 name.
func TestStates10(t *testing.T) {
	want := map[string]TaskState{
		"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED",
		"completed": "TASK_STATE_COMPLETED", "failed": "TASK_STATE_FAILED", "canceled": "TASK_STATE_CANCELED", "rejected": "TASK_STATE_REJECTED",
	}
	if diff := cmp.Diff(want, taskStates10); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
