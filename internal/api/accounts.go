package api

import (
	"context"
	"net/url"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's own account, and for the admin how people join (§11.1).

// meView is who the token acts as.
type meView struct {
	Handle string `json:"handle"`
	Name   string `json:"name"`
}

func (a *API) me(ctx context.Context, r *request) (any, error) {
	return meView{Handle: r.user.Handle, Name: r.user.Name}, nil
}

// personView is someone signed up, as the admin sees them.
type personView struct {
	Handle    string `json:"handle"`
	Name      string `json:"name"`
	Admin     bool   `json:"admin"`
	CreatedAt string `json:"created_at"`
}

type peopleView struct {
	People []personView `json:"people"`
	Signup string       `json:"signup"`
}

// signupView is how people join: open, invite or closed.
type signupView struct {
	Signup string `json:"signup"`
}

// inviteView is a one-time invitation; its path holds the secret.
type inviteView struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	ExpiresAt string `json:"expires_at"`
}

// people is, for the admin, everyone signed up and how people join.
func (a *API) people(ctx context.Context, r *request) (any, error) {
	us, err := a.hub.Users(ctx, r.user)
	if err != nil {
		return nil, err
	}
	mode, err := a.accounts.SignupMode(ctx)
	if err != nil {
		return nil, err
	}
	return peopleView{People: viewsOf(us, func(u *hub.User) personView {
		return personView{Handle: u.Handle, Name: u.Name, Admin: u.Admin, CreatedAt: timeText(u.CreatedAt)}
	}), Signup: mode}, nil
}

func (a *API) setSignup(ctx context.Context, r *request) (any, error) {
	var in struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := a.accounts.SetSignupMode(ctx, r.user, in.Mode); err != nil {
		return nil, err
	}
	return signupView{Signup: in.Mode}, nil
}

// invite makes a one-time invitation; the link is shown this once.
func (a *API) invite(ctx context.Context, r *request) (any, error) {
	inv, secret, err := a.accounts.CreateInvite(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return inviteView{ID: inv.ID, Path: "/signup?invite=" + url.QueryEscape(secret), ExpiresAt: timeText(inv.ExpiresAt)}, nil
}
