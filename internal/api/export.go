package api

import (
	"context"
	"io"

	"github.com/palaverhq/palaver/internal/export"
)

// ---- export (§18): a conversation or a project as one zip archive

func (a *API) exportConversation(ctx context.Context, r *request) (any, error) {
	e, err := a.exports.Conversation(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return archive(ctx, e), nil
}

func (a *API) exportProject(ctx context.Context, r *request) (any, error) {
	e, err := a.exports.Project(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return archive(ctx, e), nil
}

// archive is the download of an export.
func archive(ctx context.Context, e *export.Export) download {
	return download{contentType: export.ContentType, filename: export.Filename(e),
		write: func(w io.Writer) error { return export.Write(ctx, w, e) }}
}
