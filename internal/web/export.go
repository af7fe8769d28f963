package web

import (
	"context"
	"io"

	"github.com/palaverhq/palaver/internal/export"
)

// Export (§18): the Export button of a conversation's page and of a
// project's page downloads the archive.

func (w *Web) exportConversation(ctx context.Context, r *request) (*reply, error) {
	e, err := w.exports.Conversation(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return archive(ctx, e), nil
}

func (w *Web) exportProject(ctx context.Context, r *request) (*reply, error) {
	e, err := w.exports.Project(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return archive(ctx, e), nil
}

// archive is the reply that downloads an export.
func archive(ctx context.Context, e *export.Export) *reply {
	return &reply{download: &download{contentType: export.ContentType, filename: export.Filename(e),
		write: func(wr io.Writer) error { return export.Write(ctx, wr, e) }}}
}
