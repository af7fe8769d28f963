package web

import (
	"context"
	"strconv"

	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/hub"
)

// Settings for the person's own account (§11.1): their password, where
// they are signed in, and for the admin the invitations still open.

// accountSettings is the part of Settings about the person's account.
type accountSettings struct {
	SignIns []accounts.SignIn
	Invites []*hub.Invite // the admin's: open invitations
}

func (w *Web) accountSettings(ctx context.Context, r *request) (accountSettings, error) {
	var a accountSettings
	var err error
	if a.SignIns, err = w.accounts.SignIns(ctx, r.user, r.secret); err != nil {
		return a, err
	}
	if r.user.Admin {
		if a.Invites, err = w.accounts.OpenInvites(ctx, r.user); err != nil {
			return a, err
		}
	}
	return a, nil
}

// changePassword sets a new password, typed twice, once the current one
// matches; the person's other sign-ins end.
func (w *Web) changePassword(ctx context.Context, r *request) (*reply, error) {
	if r.PostFormValue("password") != r.PostFormValue("again") {
		return nil, hub.Errorf(hub.KindInvalid, "the new password and its repetition differ; type the same new password twice")
	}
	if err := w.accounts.ChangePassword(ctx, r.user, r.secret, r.PostFormValue("current"), r.PostFormValue("password")); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#account", notice: "Changed your password: every other sign-in of yours has ended; this one stays."}, nil
}

// signOutOthers ends every sign-in of the person but this browser's.
func (w *Web) signOutOthers(ctx context.Context, r *request) (*reply, error) {
	n, err := w.accounts.SignOutOthers(ctx, r.user, r.secret)
	if err != nil {
		return nil, err
	}
	notice := "Signed out everywhere else: " + strconv.Itoa(n) + " other sign-ins ended; this one stays."
	if n == 1 {
		notice = "Signed out everywhere else: 1 other sign-in ended; this one stays."
	}
	return &reply{redirect: "/settings#account", notice: notice}, nil
}

// revokeInvite takes back an invitation not used yet.
func (w *Web) revokeInvite(ctx context.Context, r *request) (*reply, error) {
	if err := w.accounts.RevokeInvite(ctx, r.user, r.PathValue("id")); err != nil {
		return nil, err
	}
	return &reply{redirect: "/settings#invites", notice: "Revoked the invitation " + r.PathValue("id") + ": its link makes no account any more."}, nil
}
