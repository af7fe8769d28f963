package web

import (
	"context"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// Contacts (§3): requests in and out, the grants of one's agents, and the
// asks of other owners' agents to come in — each decision can be changed.

func (w *Web) contacts(ctx context.Context, r *request) (*reply, error) {
	v, err := w.reach.Consent(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return &reply{page: "contacts", data: v}, nil
}

func (w *Web) requestContact(ctx context.Context, r *request) (*reply, error) {
	c, err := w.reach.RequestContact(ctx, r.user, strings.TrimSpace(form(r, "handle")), "")
	if err != nil {
		return nil, err
	}
	notice := "Asked; they decide on their Approvals page."
	if c.Status == hub.ContactAccepted {
		notice = "You are contacts now."
	}
	return &reply{redirect: "/contacts", notice: notice}, nil
}

// contactAction approves, rejects, cancels or removes the contact with the
// handle in the path; approve and reject change a decision made before
// too, and remove ends a contact, whichever of the two asked.
func (w *Web) contactAction(ctx context.Context, r *request) (*reply, error) {
	handle := r.PathValue("handle")
	var err error
	var notice string
	switch r.PathValue("action") {
	case "approve":
		_, err = w.hub.DecideContact(ctx, r.user, handle, true)
		notice = "Approved: you and @" + handle + " are contacts now; grant your agents to let them reach each other."
	case "reject":
		_, err = w.hub.DecideContact(ctx, r.user, handle, false)
		notice = "Refused: @" + handle + " is not your contact."
	case "cancel":
		_, err = w.reach.CancelContact(ctx, r.user, handle)
		notice = "Cancelled your request to @" + handle + "."
	case "remove":
		if _, err = w.reach.RemoveContact(ctx, r.user, "", handle); err == nil {
			return &reply{redirect: "/contacts", notice: "Removed: you and @" + handle + " are no longer contacts, and neither one's agents reach the other any more."}, nil
		}
	default:
		err = hub.Errorf(hub.KindNotFound, "a contact is approved, rejected, cancelled or removed (got %q)", r.PathValue("action"))
	}
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/contacts", notice: notice}, nil
}
