package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// A person's own events (§6), live on every page over server-sent events.
// Each event is sent as "changed" with its type as data and its cursor as
// the id, so parts of a page that listen for it fetch themselves again,
// and a browser that reconnects (with Last-Event-ID) misses nothing. A
// page may name the cursor to start from (?cursor=, the Bridge's own);
// Last-Event-ID, when the browser sends one, comes first. The Bridge's
// stream (?bridge=1) sends each event that is activity of the person's
// agents as an "activity" event too, carrying the row drawn, with the id.

// streamWait is how long one wait lasts before a keep-alive line.
const streamWait = 25 * time.Second

func (w *Web) stream(rw http.ResponseWriter, r *http.Request) {
	in := w.fromCookie(r)
	if in.user == nil || !w.knownHost(r.Host) {
		http.Error(rw, "sign in first", http.StatusUnauthorized)
		return
	}
	ctx, u := r.Context(), in.user
	rc := http.NewResponseController(rw)
	h := rw.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies pass each event at once
	cursor := r.Header.Get("Last-Event-ID")
	if cursor == "" {
		cursor = r.URL.Query().Get("cursor")
	}
	if cursor == "" {
		// Where the stream starts is fixed before it is open, so nothing
		// committed once the browser hears it is missed.
		latest, err := w.hub.LatestCursor(ctx, u.ID)
		if err != nil {
			http.Error(rw, "the event stream cannot start; reload the page", http.StatusServiceUnavailable)
			return
		}
		cursor = latest
	}
	bridge := r.URL.Query().Get("bridge") == "1"
	fmt.Fprint(rw, "retry: 5000\n\n")
	for {
		if err := rc.Flush(); err != nil {
			return
		}
		res, err := w.hub.WaitPerson(ctx, u, cursor, streamWait)
		// A sign-in ended (signed out, a new password) ends its streams
		// before anything more is told.
		if _, serr := w.accounts.SignedIn(ctx, in.secret); serr != nil {
			return
		}
		if err != nil {
			e := hub.AsError(err)
			switch {
			case ctx.Err() != nil:
				return
			case e.Code == "cursor_invalid" || e.Code == "cursor_expired":
				// A cursor from before a restore, or too old: start from
				// now, and have the page fetch itself once.
				cursor = ""
				fmt.Fprint(rw, "event: changed\ndata: resync\n\n")
				continue
			case e.Kind == hub.KindRateLimited:
				fmt.Fprint(rw, "retry: 30000\n\n") // too many tabs: come back later
			default:
				w.log.Warn("a person's event stream ended", "user", u.Handle, "err", err)
			}
			return
		}
		var rows map[int64]overview.Activity
		if bridge && len(res.Events) > 0 {
			if rows, err = w.bridgeRows(ctx, u, res.Events); err != nil {
				w.log.Warn("a person's event stream ended", "user", u.Handle, "err", err)
				return
			}
		}
		for _, e := range res.Events {
			row, ok := rows[e.ID]
			if !ok {
				fmt.Fprintf(rw, "event: changed\nid: %s\ndata: %s\n\n", w.hub.Cursor(e), e.Type)
				continue
			}
			var buf bytes.Buffer
			if err := w.pages["home"].ExecuteTemplate(&buf, activityRow, row); err != nil {
				w.log.Error("drawing a Bridge row", "err", err)
				return
			}
			fmt.Fprintf(rw, "event: changed\ndata: %s\n\nevent: activity\nid: %s\n", e.Type, w.hub.Cursor(e))
			// A bare CR ends a line of the stream too: none may reach it
			// from words someone else wrote.
			for line := range strings.SplitSeq(strings.ReplaceAll(buf.String(), "\r", ""), "\n") {
				fmt.Fprintf(rw, "data: %s\n", line)
			}
			fmt.Fprint(rw, "\n")
		}
		if len(res.Events) == 0 {
			fmt.Fprint(rw, ": still here\n\n")
		}
		cursor = res.Cursor
		select {
		case <-w.hub.Stopping():
			rc.Flush()
			return
		default:
		}
	}
}
