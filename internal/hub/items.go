package hub

import (
	"context"
	"errors"
)

// Items (§8): the tracked pieces of a project — tasks, repositories, sites,
// assets, links and notes — each with a status, and every change recorded
// with who made it and from which session. Adding and changing them is
// internal/projects'; the hub keeps their records, their queries, and the
// view of one with its thread, which a project's board and export read.

// MaxURL is the longest URL the hub keeps (§8).
const MaxURL = 2000

// ItemView is an item with its thread (if one was opened) and history.
type ItemView struct {
	Item           *Item
	ConversationID string
	History        []ItemChange
}

// itemView adds the item's thread and history.
func itemView(ctx context.Context, r Reader, it *Item) (*ItemView, error) {
	v := &ItemView{Item: it}
	var err error
	if v.History, err = r.ItemChanges(ctx, it.ID); err != nil {
		return nil, AsError(err)
	}
	conv, err := r.ThreadByKey(ctx, it.ProjectID, threadKey("", it.ID))
	switch {
	case err == nil:
		v.ConversationID = conv.ID
	case !errors.Is(err, ErrNoRows):
		return nil, AsError(err)
	}
	return v, nil
}

// ItemReads are the queries of items (Reader embeds them).
type ItemReads interface {
	Item(ctx context.Context, id string) (*Item, error)
	// Items lists a project's items, oldest first.
	Items(ctx context.Context, projectID string) ([]*Item, error)
	// ItemChanges lists an item's changes, oldest first.
	ItemChanges(ctx context.Context, itemID string) ([]ItemChange, error)
}

// ItemWrites are the writes of items (Tx embeds them).
type ItemWrites interface {
	InsertItem(ctx context.Context, it *Item) error
	// UpdateItem stores an item's title, note, url, status and update time.
	UpdateItem(ctx context.Context, it *Item) error
	InsertItemChange(ctx context.Context, c *ItemChange) error
}

// Images (§8): PNG, JPEG, GIF or WebP pictures stored in a project,
// recognised by their bytes. Uploading and showing them is
// internal/projects'; the hub keeps their records and queries.

// ImageReads are the queries of images (Reader embeds them).
type ImageReads interface {
	Image(ctx context.Context, id string) (*Image, error)
	// Images lists the project's images, newest first.
	Images(ctx context.Context, projectID string) ([]*Image, error)
	// ImageBySHA finds the project's image with these bytes.
	ImageBySHA(ctx context.Context, projectID, sha256 string) (*Image, error)
	// ImageData returns the bytes stored under a SHA-256.
	ImageData(ctx context.Context, sha256 string) ([]byte, error)
}

// ImageWrites are the writes of images (Tx embeds them).
type ImageWrites interface {
	// InsertImage stores an image row and its bytes (kept once per SHA-256).
	InsertImage(ctx context.Context, img *Image, data []byte) error
}
