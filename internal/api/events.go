package api

import (
	"context"
	"encoding/json"

	"github.com/palaverhq/palaver/internal/hub"
)

// eventView is one event of the person's stream (§6), with the message it
// is about when there is one.
type eventView struct {
	Cursor         string          `json:"cursor"`
	Type           string          `json:"type"`
	At             string          `json:"at"`
	ConversationID string          `json:"conversation_id,omitempty"`
	MessageID      string          `json:"message_id,omitempty"`
	Data           json.RawMessage `json:"data,omitempty"`
	Message        *messageView    `json:"message,omitempty"`
}

type eventsView struct {
	Events    []eventView `json:"events"`
	Cursor    string      `json:"cursor"`
	TimedOut  bool        `json:"timed_out"`
	Untrusted bool        `json:"untrusted"`
}

// events is a long-poll on the person's own event stream (§6): every event
// after cursor at once, or the first one to come within timeout_s.
func (a *API) events(ctx context.Context, r *request) (any, error) {
	var timeout *int64
	if r.URL.Query().Get("timeout_s") != "" {
		n, err := intQuery(r, "timeout_s", hub.WaitRange, 0)
		if err != nil {
			return nil, err
		}
		timeout = &n
	}
	d, err := hub.WaitTimeout(timeout)
	if err != nil {
		return nil, err
	}
	res, err := a.hub.WaitPerson(ctx, r.user, r.URL.Query().Get("cursor"), d)
	if err != nil {
		return nil, err
	}
	events := viewsOf(res.Events, func(e *hub.Event) eventView {
		v := eventView{Cursor: a.hub.Cursor(e), Type: e.Type, At: timeText(e.CreatedAt),
			ConversationID: e.ConversationID, MessageID: e.MessageID, Data: e.Data}
		if e.Message != nil {
			m := newMessageView(e.Message)
			v.Message = &m
		}
		return v
	})
	return eventsView{Events: events, Cursor: res.Cursor, TimedOut: res.TimedOut, Untrusted: true}, nil
}
