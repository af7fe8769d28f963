package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// wire renders the events of a stream in one revision of A2A.
type wire interface {
	task(t *tasks.Task) any                     // the task as it stands, first
	artifact(t *tasks.Task, m *hub.Message) any // a new reply of the agent's
	status(t *tasks.Task) any                   // a change of its state
}

// stream answers message/stream and tasks/resubscribe (A2A 0.3),
// SendStreamingMessage and SubscribeToTask (1.0) over server-sent events
// while the request lasts (§18): the task as it stands first, then an
// artifact update for each new reply and a status update for each change
// of state, until the task is final (tasks.Task.Final), the client hangs up
// or the server shuts down. It waits on the hub's events, never by
// polling.
func (c *call) stream(w http.ResponseWriter, id json.RawMessage, taskID string, wire wire) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return // this connection cannot stream; the client sees an empty stream end
	}
	ctx := c.r.Context()
	send := func(v any, rerr *rpcError) bool {
		b, err := json.Marshal(c.envelope(id, v, rerr))
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	first, artifacts := true, 0
	err := c.s.tasks.Watch(ctx, c.caller, c.owner, c.slug, taskID, 0, func(t *tasks.Task) bool {
		if first {
			first, artifacts = false, len(t.Replies)
			return send(wire.task(t), nil)
		}
		for ; artifacts < len(t.Replies); artifacts++ {
			if !send(wire.artifact(t, t.Replies[artifacts]), nil) {
				return false
			}
		}
		return send(wire.status(t), nil)
	})
	if err != nil && ctx.Err() == nil && !isDone(err) {
		send(nil, c.translate(ctx, err))
	}
}

func isDone(err error) bool { return err == context.Canceled || err == context.DeadlineExceeded }
