package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// A project's items and images (§8).

// itemView is an item of a project, with its thread's conversation ("" when
// it has none).
type itemView struct {
	ItemID         string `json:"item_id"`
	Kind           string `json:"kind"`
	Title          string `json:"title"`
	Status         string `json:"status"`
	Note           string `json:"note"`
	URL            string `json:"url"`
	ConversationID string `json:"conversation_id"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

func newItemView(it *hub.Item, conversationID string) itemView {
	return itemView{ItemID: it.ID, Kind: it.Kind, Title: it.Title, Status: it.Status, Note: it.Note, URL: it.URL,
		ConversationID: conversationID, CreatedAt: timeText(it.CreatedAt), UpdatedAt: timeText(it.UpdatedAt)}
}

// itemDetailView is an item with every change made to it.
type itemDetailView struct {
	itemView
	History   []changeView `json:"history"`
	Untrusted bool         `json:"untrusted"`
}

// changeView is one change of an item: who, from which session, and each
// field's new value.
type changeView struct {
	By       string            `json:"by"`
	Instance string            `json:"instance"`
	Changes  map[string]string `json:"changes"`
	At       string            `json:"at"`
}

func (a *API) item(ctx context.Context, r *request) (any, error) {
	v, err := a.boards.ItemAsPerson(ctx, r.user, r.PathValue("id"), r.PathValue("item"))
	if err != nil {
		return nil, err
	}
	history := viewsOf(v.History, func(ch hub.ItemChange) changeView {
		return changeView{By: ch.ByHandle, Instance: ch.Instance, Changes: ch.Changes, At: timeText(ch.At)}
	})
	return itemDetailView{itemView: newItemView(v.Item, v.ConversationID), History: history, Untrusted: true}, nil
}

func (a *API) image(ctx context.Context, r *request) (any, error) {
	img, data, err := a.boards.ProjectImage(ctx, r.user, r.PathValue("id"), r.PathValue("image"))
	if err != nil {
		return nil, err
	}
	return file{contentType: img.MIME, data: data}, nil
}
