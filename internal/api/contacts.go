package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/reach"
)

// Contacts (§3): requested, decided, withdrawn and ended, and everything of
// reach the person decides.

// contactView is a contact, or a request to be one, from the person's
// side: the other person, and who asked.
type contactView struct {
	Handle      string `json:"handle"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	RequestedBy string `json:"requested_by"`
	Message     string `json:"message"`
	RequestedAt string `json:"requested_at"`
	DecidedAt   string `json:"decided_at"`
}

func newContactView(c *hub.Contact, other *hub.User, me *hub.User) contactView {
	by := other.Handle
	if c.RequestedBy == me.ID {
		by = me.Handle
	}
	return contactView{Handle: other.Handle, Name: other.Name, Status: c.Status, RequestedBy: by, Message: c.Message,
		RequestedAt: timeText(c.RequestedAt), DecidedAt: timeText(c.DecidedAt)}
}

// inboundView is another owner's agent's ask to come in, decided or not.
type inboundView struct {
	ID        string   `json:"id"`
	Agent     string   `json:"agent"`
	Handles   []string `json:"handles"`
	Status    string   `json:"status"`
	At        string   `json:"at"`
	DecidedAt string   `json:"decided_at"`
}

type consentView struct {
	Contacts []contactView `json:"contacts"`
	Grants   []grantView   `json:"grants"`
	Inbound  []inboundView `json:"inbound"`
}

// contacts is everything of §3 the person decides: contacts and requests
// both ways, their agents' grants, and other owners' agents' asks to come
// in (decided ones too: a decision may be changed).
func (a *API) contacts(ctx context.Context, r *request) (any, error) {
	v, err := a.reach.Consent(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return consentView{
		Contacts: viewsOf(v.Contacts, func(c hub.ContactView) contactView { return newContactView(c.Contact, c.Other, r.user) }),
		Grants:   grantViews(v.Grants),
		Inbound: viewsOf(v.Inbound, func(in reach.InboundView) inboundView {
			return inboundView{ID: in.Ask.ID, Agent: in.Agent, Handles: in.Ask.Handles, Status: in.Ask.Status,
				At: timeText(in.Ask.CreatedAt), DecidedAt: timeText(in.Ask.DecidedAt)}
		}),
	}, nil
}

func (a *API) requestContact(ctx context.Context, r *request) (any, error) {
	var in struct {
		Handle  string `json:"handle"`
		Message string `json:"message"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	c, err := a.reach.RequestContact(ctx, r.user, in.Handle, in.Message)
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}

func (a *API) contactResult(ctx context.Context, c *hub.Contact, me *hub.User) (any, error) {
	other, err := a.hub.UserByID(ctx, c.Other(me.ID))
	if err != nil {
		return nil, err
	}
	return newContactView(c, other, me), nil
}

func (a *API) contactDecision(accept bool) handler {
	return func(ctx context.Context, r *request) (any, error) {
		c, err := a.hub.DecideContact(ctx, r.user, r.PathValue("handle"), accept)
		if err != nil {
			return nil, err
		}
		return a.contactResult(ctx, c, r.user)
	}
}

func (a *API) cancelContact(ctx context.Context, r *request) (any, error) {
	c, err := a.reach.CancelContact(ctx, r.user, r.PathValue("handle"))
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}

func (a *API) removeContact(ctx context.Context, r *request) (any, error) {
	c, err := a.reach.RemoveContact(ctx, r.user, "", r.PathValue("handle"))
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}
