package web

import (
	"context"
	"net/url"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// The Bridge, the home page (§11): what every agent of the person does as
// it happens, what waits for them, their paused conversations, and their
// agents with the sessions about now. Its event stream starts at the
// Bridge's own cursor and carries each new row, so nothing between the
// page and its stream is lost or shown twice.

func (w *Web) home(ctx context.Context, r *request) (*reply, error) {
	b, err := w.overview.Bridge(ctx, r.user)
	if err != nil {
		return nil, err
	}
	r.approvals = &b.Approvals
	return &reply{page: "home", data: b, stream: bridgeStream(b.Cursor)}, nil
}

// bridgeStream is the Bridge's event stream from cursor.
func bridgeStream(cursor string) string {
	return "/events/stream?" + url.Values{"bridge": {"1"}, "cursor": {cursor}}.Encode()
}

// activityRow is the template of one Bridge row, which the page and its
// stream both draw.
const activityRow = "activity"

// bridgeRows are live rows as the stream sends them, by event id.
func (w *Web) bridgeRows(ctx context.Context, u *hub.User, events []*hub.Event) (map[int64]overview.Activity, error) {
	rows, err := w.overview.BridgeActivity(ctx, u, events)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]overview.Activity, len(rows))
	for _, a := range rows {
		out[a.ID] = a
	}
	return out, nil
}
