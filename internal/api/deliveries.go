package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// inboxItemView is a message waiting in an agent's inbox, with its
// delivery's processing state (§5).
type inboxItemView struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Seq            int64  `json:"seq"`
	Sender         string `json:"sender"`
	Summary        string `json:"summary"`
	State          string `json:"state"`
	Attempts       int    `json:"attempts"`
	Error          string `json:"error"`
	Stuck          bool   `json:"stuck"`
	AlreadyRead    bool   `json:"already_read"`
	At             string `json:"at"`
}

type inboxView struct {
	Total     int             `json:"total"`
	Messages  []inboxItemView `json:"messages"`
	More      int             `json:"more"`
	Untrusted bool            `json:"untrusted"`
}

// agentInbox is what waits in one of the person's agents' inbox, with each
// delivery's processing state (§5).
func (a *API) agentInbox(ctx context.Context, r *request) (any, error) {
	limit, err := intQuery(r, "limit", hub.InboxPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	in, err := a.pages.AgentInbox(ctx, r.user, r.PathValue("slug"), int(limit))
	if err != nil {
		return nil, err
	}
	items := viewsOf(in.Items, func(it hub.InboxItem) inboxItemView {
		m := it.Message
		return inboxItemView{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq, Sender: m.SenderHandle, Summary: m.SummaryLine(),
			State: it.Delivery.State, Attempts: it.Delivery.Attempts, Error: it.Delivery.Error, Stuck: a.hub.Stuck(&it.Delivery),
			AlreadyRead: it.AlreadyRead(), At: timeText(m.CreatedAt)}
	})
	return inboxView{Total: in.Total, Messages: items, More: in.More, Untrusted: true}, nil
}
