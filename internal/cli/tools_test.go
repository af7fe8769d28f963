package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestDescribeTool(t *testing.T) {
	tool := &mcp.Tool{Name: "send_message", Title: "Send a message", Description: "Sends one message.",
		InputSchema: map[string]any{
			"type":     "object",
			"required": []any{"conversation_id", "body"},
			"properties": map[string]any{
				"body":            map[string]any{"type": "string", "minLength": 1, "maxLength": 20000, "description": "the words"},
				"conversation_id": map[string]any{"type": "string", "description": "where"},
				"format":          map[string]any{"type": "string", "enum": []any{"text", "markdown"}, "default": "text", "description": "how to render it"},
				"mentions":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 10},
				"reply_to_seq":    map[string]any{"type": []any{"integer", "null"}, "minimum": 1},
			},
		}}
	var out bytes.Buffer
	if err := describeTool(&out, tool); err != nil {
		t.Fatal(err)
	}
	want := `send_message — Send a message

Sends one message.

ARGUMENT         TYPE             REQUIRED  DEFAULT  BOUNDS              DESCRIPTION
conversation_id  string           yes       -        -                   where
body             string           yes       -        1-20000 chars       the words
format           string           no        "text"   one of text|markdown  how to render it
mentions         array of string  no        -        ≤10 items           
reply_to_seq     integer or null  no        -        ≥1                  
`
	// tabwriter pads by bytes, not runes: compare with the columns collapsed.
	collapse := func(s string) string { return regexp.MustCompile(` {2,}`).ReplaceAllString(s, "  ") }
	if d := cmp.Diff(collapse(want), collapse(out.String())); d != "" {
		t.Errorf("describeTool (-want +got):\n%s", d)
	}

	out.Reset()
	if err := describeTool(&out, &mcp.Tool{Name: "check_inbox", Description: "What waits.", InputSchema: map[string]any{"type": "object"}}); err != nil {
		t.Fatal(err)
	}
	if want := "check_inbox\n\nWhat waits.\n\nIt takes no arguments.\n"; out.String() != want {
		t.Errorf("a tool without arguments: %q, want %q", out.String(), want)
	}
}

// TestToolsCommand: palaver tools lists what the server serves, and
// palaver tools NAME shows that tool's arguments from the same list.
func TestToolsCommand(t *testing.T) {
	ctx := context.Background()
	_, _, vars := ownerAndAgent(t)
	code, stdout, stderr := run(t, ctx, vars, "tools")
	if code != 0 || !regexp.MustCompile(`(?m)^wait_for_messages +Wait for messages$`).MatchString(stdout) {
		t.Fatalf("palaver tools: exit %d: %s %s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, ctx, vars, "tools", "wait_for_messages")
	if code != 0 || !strings.HasPrefix(stdout, "wait_for_messages — Wait for messages\n\nReturns every event after cursor") {
		t.Fatalf("palaver tools wait_for_messages: exit %d: %s %s", code, stdout, stderr)
	}
	for _, re := range []string{
		`(?m)^ARGUMENT +TYPE +REQUIRED +DEFAULT +BOUNDS +DESCRIPTION$`,
		`(?m)^timeout_s +integer +no +25 +0-55 +seconds to wait, 0-55$`,
		`(?m)^cursor +string +no +- +- +the last cursor you received`,
	} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("palaver tools wait_for_messages does not match %s:\n%s", re, stdout)
		}
	}
	if code, _, stderr = run(t, ctx, vars, "tools", "nope"); code != 1 || !strings.Contains(stderr, `has no tool "nope"; palaver tools lists them`) {
		t.Errorf("palaver tools nope: exit %d: %s", code, stderr)
	}
}
