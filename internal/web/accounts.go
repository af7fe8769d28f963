package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/hub"
)

// Accounts (§11.1): first-run setup, sign-in and out, sign-up.

// accountForm is what the setup, sign-in and sign-up forms show again
// after an error: never the password.
type accountForm struct {
	Handle, Name, Invite, Next string
	Mode                       string // sign-up: accounts.SignupOpen or accounts.SignupInvite
	Closed                     string // sign-up: why there is no form to fill in
}

func (w *Web) setupPage(ctx context.Context, r *request) (*reply, error) {
	need, err := w.accounts.NeedsSetup(ctx)
	if err != nil {
		return nil, err
	}
	if !need {
		return &reply{redirect: "/signin"}, nil
	}
	return &reply{page: "setup", data: accountForm{}}, nil
}

// setup makes the first account, the admin, and signs them in.
func (w *Web) setup(ctx context.Context, r *request) (*reply, error) {
	f := accountForm{Handle: form(r, "handle"), Name: form(r, "name")}
	_, secret, err := w.accounts.Setup(ctx, f.Handle, f.Name, r.FormValue("password"))
	if err != nil {
		return nil, &again{page: "setup", data: f, err: err}
	}
	return w.signedIn(ctx, r, secret, "/agents", "Welcome. Create your first agent, then mint it a token."), nil
}

func (w *Web) signinPage(ctx context.Context, r *request) (*reply, error) {
	if r.user != nil {
		return &reply{redirect: "/"}, nil
	}
	if need, err := w.accounts.NeedsSetup(ctx); err != nil || need {
		return &reply{redirect: "/setup"}, err
	}
	mode, err := w.accounts.SignupMode(ctx)
	if err != nil {
		return nil, err
	}
	return &reply{page: "signin", data: accountForm{Next: localPath(r.URL.Query().Get("next")), Mode: mode}}, nil
}

func (w *Web) signin(ctx context.Context, r *request) (*reply, error) {
	f := accountForm{Handle: form(r, "handle"), Next: localPath(form(r, "next"))}
	to := f.Next
	if to == "" {
		to = "/"
	}
	_, secret, err := w.accounts.SignIn(ctx, f.Handle, r.FormValue("password"), w.clientAddr(r.Request))
	if err != nil {
		return nil, &again{page: "signin", data: f, err: err}
	}
	return w.signedIn(ctx, r, secret, to, ""), nil
}

// signedIn sets the cookie of a new sign-in and goes on to the page; a
// sign-in this browser held before ends (the cookie is rotated).
func (w *Web) signedIn(ctx context.Context, r *request, secret, to, notice string) *reply {
	if r.secret != "" {
		if err := w.accounts.SignOut(ctx, r.secret); err != nil {
			w.log.Warn("ending the sign-in a new one replaces", "err", err)
		}
	}
	return &reply{redirect: to, notice: notice, cookies: []*http.Cookie{w.signInCookie(secret, accounts.LoginLifetime)}}
}

func (w *Web) signInCookie(secret string, lifetime time.Duration) *http.Cookie {
	return &http.Cookie{Name: w.cookieName(), Value: secret, Path: "/", MaxAge: int(lifetime / time.Second),
		HttpOnly: true, Secure: w.secure, SameSite: http.SameSiteLaxMode}
}

func (w *Web) signout(ctx context.Context, r *request) (*reply, error) {
	if r.secret != "" {
		if err := w.accounts.SignOut(ctx, r.secret); err != nil {
			return nil, err
		}
	}
	gone := w.signInCookie("", 0)
	gone.MaxAge = -1
	return &reply{redirect: "/signin", notice: "Signed out.", cookies: []*http.Cookie{gone}}, nil
}

func (w *Web) signupPage(ctx context.Context, r *request) (*reply, error) {
	mode, err := w.accounts.SignupMode(ctx)
	if err != nil {
		return nil, err
	}
	f := accountForm{Invite: r.URL.Query().Get("invite"), Mode: mode}
	switch {
	case f.Invite != "":
		if err := w.accounts.CheckInvite(ctx, f.Invite); err != nil {
			f.Closed = hub.AsError(err).Text(nil, pageWay)
		}
	case mode != accounts.SignupOpen:
		f.Closed = "This server takes new people by invitation only. Open the link its admin gave you."
	}
	return &reply{page: "signup", data: f}, nil
}

// signup makes an account (open sign-up, or with an invitation) and
// signs them in.
func (w *Web) signup(ctx context.Context, r *request) (*reply, error) {
	f := accountForm{Handle: form(r, "handle"), Name: form(r, "name"), Invite: form(r, "invite")}
	_, secret, err := w.accounts.SignUp(ctx, f.Handle, f.Name, r.FormValue("password"), f.Invite, w.clientAddr(r.Request))
	if err != nil {
		f.Mode, _ = w.accounts.SignupMode(ctx)
		return nil, &again{page: "signup", data: f, err: err}
	}
	return w.signedIn(ctx, r, secret, "/", "Welcome to Palaver."), nil
}

// localPath keeps a next= that is a path on this site, and drops
// anything else (another site, a scheme, a protocol-relative URL).
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return ""
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" {
		return ""
	}
	return p
}
