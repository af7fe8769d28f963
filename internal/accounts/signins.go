package accounts

import (
	"context"
	"errors"

	"github.com/alexedwards/argon2id"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's own sign-ins (§11.1): changing their password, which ends
// their other sign-ins; listing where they are signed in, and ending all
// but this one. And the admin's open invitations, which may be revoked
// before they are used.

// SignIn is one of a person's sign-ins, and whether it is the one asking.
type SignIn struct {
	*hub.Login
	Current bool
}

// current is the sign-in whose secret this is, the person's own.
func (a *Accounts) current(ctx context.Context, u *hub.User, secret string) (*hub.Login, error) {
	l, err := a.store.LoginByHash(ctx, hub.HashToken(secret))
	if errors.Is(err, hub.ErrNoRows) || (err == nil && l.UserID != u.ID) {
		return nil, &hub.Error{Kind: hub.KindUnauthenticated, Msg: "this sign-in has ended; sign in again"}
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	return l, nil
}

// ChangePassword sets the person's new password once their current one
// matches, and ends every other sign-in of theirs: the one with this
// secret stays. A wrong current password is counted as a failed sign-in
// of the account, so it cannot be guessed at from a sign-in left open.
func (a *Accounts) ChangePassword(ctx context.Context, u *hub.User, secret, current, password string) error {
	l, err := a.current(ctx, u, secret)
	if err != nil {
		return err
	}
	refund, wait := a.signins.Take(a.hub.Now(), "user:"+u.ID, perAccountAddress)
	if refund == nil {
		return hub.Throttled("password attempts", wait)
	}
	hash, err := a.store.PasswordHash(ctx, u.ID)
	if err != nil {
		refund()
		return hub.AsError(err)
	}
	var match bool
	if hash != "" {
		if werr := withHashing(ctx, func() { match, err = argon2id.ComparePasswordAndHash(current, hash) }); werr != nil {
			refund()
			return werr
		}
		if err != nil {
			refund()
			return hub.AsError(err)
		}
	}
	if !match {
		return invalid("bad_credentials", "that is not your current password; type it again to change it")
	}
	refund()
	newHash, err := hashPassword(ctx, password)
	if err != nil {
		return err
	}
	return a.store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.SetPasswordHash(ctx, u.ID, newHash); err != nil {
			return err
		}
		return tx.DeleteLoginsExcept(ctx, u.ID, l.ID)
	})
}

// SignIns lists the person's sign-ins that last, the last used first,
// marking the one with this secret.
func (a *Accounts) SignIns(ctx context.Context, u *hub.User, secret string) ([]SignIn, error) {
	ls, err := a.store.LoginsOf(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	mine := hub.HashToken(secret)
	now := a.hub.Now()
	var out []SignIn
	for _, l := range ls {
		if now.Before(l.ExpiresAt) {
			out = append(out, SignIn{Login: l, Current: string(l.Hash) == string(mine)})
		}
	}
	return out, nil
}

// SignOutOthers ends every sign-in of the person but the one with this
// secret, and says how many there were.
func (a *Accounts) SignOutOthers(ctx context.Context, u *hub.User, secret string) (int, error) {
	l, err := a.current(ctx, u, secret)
	if err != nil {
		return 0, err
	}
	ls, err := a.SignIns(ctx, u, secret)
	if err != nil {
		return 0, err
	}
	if err := a.store.Update(ctx, func(tx hub.Tx) error { return tx.DeleteLoginsExcept(ctx, u.ID, l.ID) }); err != nil {
		return 0, hub.AsError(err)
	}
	return len(ls) - 1, nil
}

// OpenInvites are the invitations neither used nor expired, for the admin.
func (a *Accounts) OpenInvites(ctx context.Context, u *hub.User) ([]*hub.Invite, error) {
	if !u.Admin {
		return nil, &hub.Error{Kind: hub.KindForbidden, Msg: "only the admin sees the invitations"}
	}
	invs, err := a.store.OpenInvites(ctx, a.hub.Now())
	if err != nil {
		return nil, hub.AsError(err)
	}
	return invs, nil
}

// RevokeInvite is the admin taking back an invitation not used yet: its
// link makes no account any more.
func (a *Accounts) RevokeInvite(ctx context.Context, u *hub.User, id string) error {
	if !u.Admin {
		return &hub.Error{Kind: hub.KindForbidden, Msg: "only the admin revokes invitations"}
	}
	err := a.store.Update(ctx, func(tx hub.Tx) error { return tx.DeleteInvite(ctx, id) })
	if errors.Is(err, hub.ErrNoRows) {
		return &hub.Error{Kind: hub.KindNotFound, Msg: "no open invitation " + hub.Echo(id) + "; it was used or revoked already"}
	}
	if err != nil {
		return hub.AsError(err)
	}
	return nil
}
