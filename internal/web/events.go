package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's own events (§6), live on every page over server-sent events.
// Each event is sent as "changed" with its type as data and its cursor as
// the id, so parts of a page that listen for it fetch themselves again,
// and a browser that reconnects (with Last-Event-ID) misses nothing.

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
	fmt.Fprint(rw, "retry: 5000\n\n")
	for {
		if err := rc.Flush(); err != nil {
			return
		}
		res, err := w.hub.WaitPerson(ctx, u, cursor, streamWait)
		// A sign-in ended (signed out, a new password) ends its streams
		// before anything more is told.
		if _, serr := w.hub.SignedIn(ctx, in.secret); serr != nil {
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
		for _, e := range res.Events {
			fmt.Fprintf(rw, "event: changed\nid: %s\ndata: %s\n\n", w.hub.Cursor(e), e.Type)
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
