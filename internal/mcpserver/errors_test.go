package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestToolErrorTable lists every hub error kind against the MCP face's one
// translation (CONVENTIONS "Errors").
func TestToolErrorTable(t *testing.T) {
	want := map[hub.Kind]string{
		hub.KindInternal:        "internal",
		hub.KindNotFound:        "not_found",
		hub.KindInvalid:         "invalid_argument",
		hub.KindConflict:        "conflict",
		hub.KindForbidden:       "forbidden",
		hub.KindUnauthenticated: "unauthenticated",
		hub.KindRateLimited:     "rate_limited",
	}
	if len(want) != len(hub.Kinds) {
		t.Fatalf("the table has %d kinds, hub has %d", len(want), len(hub.Kinds))
	}
	c := &call{srv: &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}, tool: "test"}
	for _, k := range hub.Kinds {
		res, err := c.toolError(context.Background(), &hub.Error{Kind: k, Msg: "say what to do", Err: errors.New("driver detail")})
		if err != nil || !res.IsError {
			t.Fatalf("%v: result %v, err %v", k, res, err)
		}
		var got struct {
			Error map[string]any `json:"error"`
			Trace string         `json:"trace"`
		}
		json.Unmarshal(res.StructuredContent.(json.RawMessage), &got)
		msg := "say what to do"
		if k == hub.KindInternal {
			msg = "internal error (trace " + got.Trace + "); retry later, and quote the trace when reporting it"
		}
		if diff := cmp.Diff(map[string]any{"code": want[k], "message": msg}, got.Error); diff != "" {
			t.Errorf("%v (-want +got):\n%s", k, diff)
		}
	}
	// An untyped error is internal, and its text never reaches the caller.
	res, _ := c.toolError(context.Background(), errors.New("sqlite: disk I/O error"))
	if b, _ := json.Marshal(res); strings.Contains(string(b), "sqlite") {
		t.Errorf("an internal error leaked its cause: %s", b)
	}

	// Resources go through the same table, as JSON-RPC errors: invalid
	// params for what the caller can mend, internal error for the rest.
	for _, k := range hub.Kinds {
		err := c.resourceError(context.Background(), &hub.Error{Kind: k, Msg: "say what to do", Err: errors.New("driver detail")})
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("%v: resource error %T, want a JSON-RPC error", k, err)
		}
		var data struct {
			Error map[string]any `json:"error"`
			Trace string         `json:"trace"`
		}
		json.Unmarshal(je.Data, &data)
		wantCode, msg := int64(jsonrpc.CodeInvalidParams), "say what to do"
		if k == hub.KindInternal {
			wantCode, msg = jsonrpc.CodeInternalError, "internal error (trace "+data.Trace+"); retry later, and quote the trace when reporting it"
		}
		if je.Code != wantCode || je.Message != msg || strings.Contains(string(je.Data), "driver detail") {
			t.Errorf("%v: resource error %d %q %s, want %d %q without the cause", k, je.Code, je.Message, je.Data, wantCode, msg)
		}
		if diff := cmp.Diff(map[string]any{"code": want[k], "message": msg}, data.Error); diff != "" {
			t.Errorf("%v: resource error data (-want +got):\n%s", k, diff)
		}
	}
}
