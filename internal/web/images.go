package web

import "context"

// Images of a project (§8), shown in its posts to its members.

// image is a project's image for a member, for the markdown that shows it.
func (w *Web) image(ctx context.Context, r *request) (*reply, error) {
	img, data, err := w.boards.ProjectImage(ctx, r.user, r.PathValue("id"), r.PathValue("image"))
	if err != nil {
		return nil, err
	}
	return &reply{image: img, bytes: data}, nil
}
