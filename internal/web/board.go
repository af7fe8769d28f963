package web

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/palaverhq/palaver/internal/projects"
)

// A person's hand on a project's board and threads (§8), as agents have
// theirs: add an item, change one, and post in a thread from the
// project's page.

// addItem adds an item to the board, open.
func (w *Web) addItem(ctx context.Context, r *request) (*reply, error) {
	v, err := w.boards.AddItemAsPerson(ctx, r.user, r.PathValue("id"), projects.ItemSpec{Kind: form(r, "kind"), Title: form(r, "title"),
		Note: form(r, "note"), URL: strings.TrimSpace(form(r, "url"))})
	if err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "#" + v.Item.ID, notice: "Added “" + v.Item.Title + "” to the board, open."}, nil
}

// editItem changes an item's title, note, url and status, as its page's
// form left them; what did not change is not recorded.
func (w *Web) editItem(ctx context.Context, r *request) (*reply, error) {
	title, note, link, status := form(r, "title"), form(r, "note"), strings.TrimSpace(form(r, "url")), form(r, "status")
	v, err := w.boards.UpdateItemAsPerson(ctx, r.user, r.PathValue("id"), r.PathValue("item"), projects.ItemEdit{Title: &title, Note: &note, URL: &link, Status: &status})
	if err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "/items/" + url.PathEscape(v.Item.ID), notice: "Saved “" + v.Item.Title + "”, " + v.Item.Status + "."}, nil
}

// postInThread posts the person's words in one of the project's threads
// and comes back to the project.
func (w *Web) postInThread(ctx context.Context, r *request) (*reply, error) {
	thread := form(r, "thread")
	res, err := w.hub.PostAsPerson(ctx, r.user, thread, form(r, "body"), form(r, "format"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: projectPath(r.PathValue("id")) + "#threads",
		notice: "Posted in the thread as message #" + strconv.FormatInt(res.Message.Seq, 10) + "; its agents read it there."}, nil
}
