package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpclient"
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
	if url := e.getenv("PALAVER_URL"); mcpclient.RoomsEndpoint(url) {
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
		if *cursor, err = mcpclient.LatestCursor(ctx, s, ce); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(e.stdout)
	for {
		r, err := mcpclient.CallTool(ctx, s, ce, "wait_for_messages", map[string]any{"timeout_s": *timeout, "cursor": *cursor})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if ce.Refused() != "" {
				return err // the token, not the connection
			}
			s.Close()
			if s, err = mcpclient.Reconnect(ctx, ce, nil, e.stderr, "palaver wait", err, "to go on after cursor "+*cursor); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			continue
		}
		if r.IsError {
			return fmt.Errorf("wait_for_messages: %s", mcpclient.ResultJSON(r))
		}
		var out struct {
			Events []map[string]any `json:"events"`
			Cursor string           `json:"cursor"`
		}
		if err := json.Unmarshal(mcpclient.ResultJSON(r), &out); err != nil {
			return errors.New("wait_for_messages returned an unexpected result: " + string(mcpclient.ResultJSON(r)))
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
