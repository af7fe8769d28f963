package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// runWait: palaver wait [--cursor C] [--timeout 55] [--once] follows the
// agent's event stream, printing each event as one JSON line carrying its own
// cursor to resume after it; a harness without MCP can live on call and
// wait. With --once, a wait that times out prints {"timed_out":true,
// "cursor":…}.
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
	s, ce, err := dial(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	enc := json.NewEncoder(e.stdout)
	for {
		args := map[string]any{"timeout_s": *timeout}
		if *cursor != "" {
			args["cursor"] = *cursor
		}
		r, err := callTool(ctx, s, ce, "wait_for_messages", args)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
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
		if *once {
			if len(out.Events) == 0 {
				return enc.Encode(map[string]any{"timed_out": true, "cursor": out.Cursor})
			}
			return nil
		}
	}
}
