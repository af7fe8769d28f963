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
