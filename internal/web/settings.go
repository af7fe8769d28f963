package web

import (
	"context"
	"net/url"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

// Settings: the person's API tokens for scripts, and for the admin how
// people join (§11.1).

// settingsPage is the settings page: the person's own API tokens, and for
// the admin the sign-up mode and everyone signed up.
type settingsPage struct {
	Email   string          // on the person's profile ("" for none)
	Account accountSettings // settings_account.go
	Notify  *notifySection  // notify.go
	Tokens  []*hub.Token
	Mode    string
	People  []*hub.User
}

func (w *Web) settings(ctx context.Context, r *request) (*reply, error) {
	ts, err := w.hub.APITokens(ctx, r.user)
	if err != nil {
		return nil, err
	}
	p := settingsPage{Email: r.user.Email, Tokens: ts}
	if p.Notify, err = w.notifySettings(ctx, r); err != nil {
		return nil, err
	}
	if p.Account, err = w.accountSettings(ctx, r); err != nil {
		return nil, err
	}
	if r.user.Admin {
		if p.Mode, err = w.accounts.SignupMode(ctx); err != nil {
			return nil, err
		}
		if p.People, err = w.hub.Users(ctx, r.user); err != nil {
			return nil, err
		}
	}
	return &reply{page: "settings", data: p}, nil
}

// setEmail sets the email on the person's profile, or clears it.
func (w *Web) setEmail(ctx context.Context, r *request) (*reply, error) {
	u, err := w.hub.UpdateUserEmail(ctx, r.user, form(r, "email"))
	if err != nil {
		return nil, err
	}
	if u.Email == "" {
		return &reply{redirect: "/settings", notice: "Your profile shows no email now."}, nil
	}
	return &reply{redirect: "/settings", notice: "Your profile shows " + u.Email + " now."}, nil
}

func (w *Web) setSignup(ctx context.Context, r *request) (*reply, error) {
	mode := form(r, "mode")
	if err := w.accounts.SetSignupMode(ctx, r.user, mode); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings", notice: "Sign-up is now " + mode + "."}, nil
}

// invitePage shows an invitation link made just now, this once.
type invitePage struct {
	Link   string
	Invite *hub.Invite
}

func (w *Web) invite(ctx context.Context, r *request) (*reply, error) {
	inv, secret, err := w.accounts.CreateInvite(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return &reply{page: "invite", data: invitePage{Link: w.siteURL(r) + "/signup?invite=" + url.QueryEscape(secret), Invite: inv}}, nil
}

// siteURL is the server's base URL as configured, or as this browser
// reached it.
func (w *Web) siteURL(r *request) string { return httpx.BaseURL(w.base, r.Request) }

func (w *Web) mintUserToken(ctx context.Context, r *request) (*reply, error) {
	days, err := wholeNumber(form(r, "expires_in_days"), "expires in (days)")
	if err != nil {
		return nil, err
	}
	t, secret, err := w.hub.MintUserToken(ctx, r.user.Handle, form(r, "name"), hub.Days(days))
	if err != nil {
		return nil, err
	}
	return &reply{page: "token", data: tokenPage{Token: t, Secret: secret, MCPURL: w.siteURL(r) + "/api/v1/"}}, nil
}

func (w *Web) revokeUserToken(ctx context.Context, r *request) (*reply, error) {
	t, err := w.hub.RevokeOwnToken(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings", notice: "Revoked " + tokenLabel(t) + "."}, nil
}
