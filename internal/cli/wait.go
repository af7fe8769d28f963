package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// Backoff between attempts to reach a server that went away: it doubles
// from the first to the last.
const (
	firstBackoff = 250 * time.Millisecond
	lastBackoff  = 10 * time.Second
)

// runWait: palaver wait [--cursor C] [--timeout 55] [--once] follows the
// agent's event stream, printing each event as one JSON line carrying its own
// cursor to resume after it; a harness without MCP can live on call and
// wait. A wait that times out prints {"timed_out":true,"cursor":…}; with
// --once it is the last line. When the server goes away (a restart) it
// says so on stderr and reconnects with backoff, going on from the same
// cursor, so no event is lost or repeated.
func runWait(ctx context.Context, e *env, args []string) error {
	maxWait := int(hub.MaxWait / time.Second)
	fs := newFlags(e, "wait", fmt.Sprintf("wait [--cursor CURSOR] [--timeout %d] [--once]   (env PALAVER_URL, PALAVER_TOKEN, PALAVER_INSTANCE)", maxWait))
	cursor := fs.String("cursor", "", "resume after this cursor (default: whoami's latest_cursor, so only new events)")
	timeout := fs.Int("timeout", maxWait, fmt.Sprintf("seconds each wait may park, 0-%d", maxWait))
	once := fs.Bool("once", false, "return after the first wait that brings events (or times out)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	if *timeout < 0 || *timeout > maxWait {
		return fmt.Errorf("--timeout %d: give 0 to %d seconds", *timeout, maxWait)
	}
	if url := e.getenv("PALAVER_URL"); roomsEndpoint(url) {
		return fmt.Errorf("the rooms profile at %s has no event stream: poll get_agent_next_message there, or wait on the default profile (PALAVER_URL=%s/) with the same agent token", url, strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/rooms"))
	}
	s, ce, err := dial(ctx, e)
	if err != nil {
		return err
	}
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	if *cursor == "" {
		// Start from a cursor of our own, so a reconnect before the first
		// wait answers cannot skip what arrived meanwhile.
		if *cursor, err = latestCursor(ctx, s, ce); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(e.stdout)
	for {
		r, err := callTool(ctx, s, ce, "wait_for_messages", map[string]any{"timeout_s": *timeout, "cursor": *cursor})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if *ce.refused != "" {
				return err // the token, not the connection
			}
			s.Close()
			if s, err = reconnect(ctx, e, ce, err, *cursor); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		if r.IsError {
			return fmt.Errorf("wait_for_messages: %s", resultJSON(r))
		}
		var out struct {
			Events []map[string]any `json:"events"`
			Cursor string           `json:"cursor"`
		}
		if err := json.Unmarshal(resultJSON(r), &out); err != nil {
			return errors.New("wait_for_messages returned an unexpected result: " + string(resultJSON(r)))
		}
		for _, ev := range out.Events {
			if err := enc.Encode(ev); err != nil {
				return err
			}
		}
		*cursor = out.Cursor
		if len(out.Events) == 0 {
			if err := enc.Encode(map[string]any{"timed_out": true, "cursor": out.Cursor}); err != nil {
				return err
			}
		}
		if *once {
			return nil
		}
	}
}

// latestCursor is whoami's latest_cursor.
func latestCursor(ctx context.Context, s *mcp.ClientSession, ce clientEnv) (string, error) {
	r, err := callTool(ctx, s, ce, "whoami", map[string]any{})
	if err != nil {
		return "", err
	}
	var me struct {
		LatestCursor string `json:"latest_cursor"`
	}
	if r.IsError || json.Unmarshal(resultJSON(r), &me) != nil || me.LatestCursor == "" {
		return "", errors.New("whoami returned no latest_cursor: " + string(resultJSON(r)))
	}
	return me.LatestCursor, nil
}

// reconnect opens a new session after lost ended the last one, trying with
// backoff until the server answers or ctx ends, and saying so on stderr.
func reconnect(ctx context.Context, e *env, ce clientEnv, lost error, cursor string) (*mcp.ClientSession, error) {
	fmt.Fprintf(e.stderr, "palaver wait: lost the server (%s); reconnecting, to go on after cursor %s\n", message(lost), cursor)
	backoff := firstBackoff
	for {
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		s, err := connect(ctx, ce)
		if err == nil {
			fmt.Fprintf(e.stderr, "palaver wait: reconnected to %s\n", ce.url)
			return s, nil
		}
		if *ce.refused != "" {
			return nil, err
		}
		backoff = min(2*backoff, lastBackoff)
		fmt.Fprintf(e.stderr, "palaver wait: still cannot reach the server (%s); next try in %v\n", message(err), backoff)
	}
}
