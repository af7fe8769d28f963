package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// failingInstances is a real store whose instance listing fails on demand,
// as a broken disk would.
type failingInstances struct {
	hub.Store
	fail atomic.Bool
}

func (s *failingInstances) Instances(ctx context.Context, agentID string) ([]hub.Instance, error) {
	if s.fail.Load() {
		return nil, errors.New("sqlite: disk I/O error (522)")
	}
	return s.Store.Instances(ctx, agentID)
}

// TestResourceReadFailingInternally: a resource read that fails inside the
// store reaches the client as a safe message with a trace id, which names
// exactly one log line carrying the cause; the cause never reaches the
// client. Both protocol eras.
func TestResourceReadFailingInternally(t *testing.T) {
	fs := &failingInstances{}
	ts := newTestServerOn(t, hub.DefaultSettings(), func(s hub.Store) hub.Store { fs.Store = s; return fs })
	for _, era := range []string{modern, older} {
		s := ts.client(t, "alice/planner", era)
		if _, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "palaver://me"}); err != nil {
			t.Fatalf("%s: palaver://me while the store works: %v", era, err)
		}
		fs.fail.Store(true)
		_, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "palaver://me"})
		fs.fail.Store(false)
		if err == nil {
			t.Fatalf("%s: palaver://me read while the store fails", era)
		}
		msg := err.Error()
		i := strings.Index(msg, "tr_")
		if strings.Contains(msg, "sqlite") || strings.Contains(msg, "disk") || i < 0 || !strings.Contains(msg, "internal error (trace ") {
			t.Fatalf("%s: the client got %q; want the safe message with a trace and no cause", era, msg)
		}
		trace := msg[i : i+len("tr_")+16]
		lines := ts.logLines(trace)
		if len(lines) != 1 || !strings.Contains(lines[0], "disk I/O error") || !strings.Contains(lines[0], `"level":"ERROR"`) {
			t.Fatalf("%s: log lines for %s: %q; want one error line with the cause", era, trace, lines)
		}
		var line map[string]any
		if json.Unmarshal([]byte(lines[0]), &line) != nil || line["tool"] != "resource palaver://me" || line["agent"] != "alice/planner" {
			t.Fatalf("%s: the log line %s does not name the resource and the agent", era, lines[0])
		}
	}
}

// TestThreadsResource: resources/list names each open conversation under
// palaver://threads/{conversation_id}; reading one gives its latest
// messages as lines, with no body, and marks nothing read (§10.4).
func TestThreadsResource(t *testing.T) {
	ts := newTestServer(t)
	planner, reviewer := ts.client(t, "alice/planner", modern), ts.client(t, "alice/reviewer", modern)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"].(string)
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "the secret body of the plan", "summary": "Review the plan"})
	list, err := reviewer.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.Resources {
		found = found || r.URI == "palaver://threads/"+conv
	}
	if !found {
		t.Fatalf("resources/list: %v, want palaver://threads/%s", list.Resources, conv)
	}
	res, err := reviewer.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "palaver://threads/" + conv})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	if strings.Contains(text, "secret body") || !strings.Contains(text, "Review the plan") {
		t.Fatalf("the thread resource: %s, want the summary and no body", text)
	}
	inbox := mustCall(t, reviewer, "check_inbox", nil)["messages"].([]any)
	if len(inbox) != 1 || inbox[0].(map[string]any)["already_read"] != nil {
		t.Fatalf("after reading the resource the inbox is %v, want the message unread", inbox)
	}
	if _, err := ts.client(t, "bob/helper", modern).ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "palaver://threads/" + conv}); err == nil || !strings.Contains(err.Error(), "no conversation") {
		t.Fatalf("bob's agent reading alice's thread resource: %v, want not found", err)
	}
}

// TestSeedResourceAlias: crowdedsea://me, the default profile's seed's
// name, answers as palaver://me does, under the URI asked for, and is not
// listed twice.
func TestSeedResourceAlias(t *testing.T) {
	ts := newTestServer(t)
	s := ts.client(t, "alice/planner", modern)
	var texts []string
	for _, uri := range []string{"palaver://me", "crowdedsea://me"} {
		r, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].URI != uri {
			t.Fatalf("%s: %v %v", uri, r, err)
		}
		var me map[string]any
		if err := json.Unmarshal([]byte(r.Contents[0].Text), &me); err != nil || me["agent"] == nil {
			t.Fatalf("%s: %s, want whoami", uri, r.Contents[0].Text)
		}
		delete(me, "latest_cursor")
		texts = append(texts, string(must(json.Marshal(me))))
	}
	if texts[0] != texts[1] {
		t.Errorf("crowdedsea://me differs from palaver://me:\n%s\n%s", texts[1], texts[0])
	}
	list, err := s.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if strings.HasPrefix(r.URI, "crowdedsea://") {
			t.Errorf("the alias %s is listed", r.URI)
		}
	}
}
