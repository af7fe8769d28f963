package accounts

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/throttle"

	"github.com/alexedwards/argon2id"
)

// Package accounts is how people sign in to the dashboard (DESIGN.md
// §11.1): with a password. The first person is the admin, made by
// first-run setup (or the command line); others join by open sign-up or an
// invitation link, as the admin sets. Passwords are hashed with argon2id;
// sign-ins are throttled per account and per address; each sign-in is a row
// of its own, so every replica knows it. Who a person is and what they may
// do are the hub's; this package only lets them in.

// Limits of accounts.
const (
	MinPassword     = 10
	MaxPassword     = 200
	LoginLifetime   = 30 * 24 * time.Hour
	InviteLifetime  = 7 * 24 * time.Hour
	LoginSecretFlag = "pls_" // starts a sign-in's secret, the cookie's value
	InviteFlag      = "pli_" // starts an invitation's secret
)

// Sign-up modes (§11.1), kept under MetaSignup.
const (
	MetaSignup   = "signup"
	SignupInvite = "invite" // the default: only with an invitation link
	SignupOpen   = "open"
)

// An Accounts lets people in, over the hub's store.
type Accounts struct {
	hub     *hub.Hub // its clock, and the people it makes
	store   Store
	log     *slog.Logger
	signins throttle.Throttle // sign-in attempts per account and per address, accounts made per address
}

// Store is what Accounts reads and writes.
type Store interface {
	hub.MetaReads
	hub.UserReads
	hub.AccountReads
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
}

// New returns the accounts of the hub's people, over its store.
func New(h *hub.Hub, s Store, log *slog.Logger) *Accounts {
	if log == nil {
		log = slog.Default()
	}
	return &Accounts{hub: h, store: s, log: log}
}

// touchEvery limits how often a sign-in's last use is written.
const touchEvery = time.Minute

func invalid(code, format string, args ...any) *hub.Error {
	return &hub.Error{Kind: hub.KindInvalid, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// passwordParams are OWASP's argon2id parameters: 19 MiB, 2 passes, 1 lane.
var passwordParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// hashing bounds how many argon2id hashes run at once: each takes 19 MiB.
var hashing = make(chan struct{}, max(2, runtime.NumCPU()))

// withHashing runs fn while holding one of the hashing slots, or gives up
// when ctx ends first.
func withHashing(ctx context.Context, fn func()) error {
	select {
	case hashing <- struct{}{}:
	case <-ctx.Done():
		return &hub.Error{Kind: hub.KindRateLimited, Msg: "the server is busy checking passwords; try again in a moment", Details: map[string]any{"retry_after_s": 1}}
	}
	defer func() { <-hashing }()
	fn()
	return nil
}

// hashPassword refuses a password that is too short or too long, and
// hashes one that is not.
func hashPassword(ctx context.Context, password string) (string, error) {
	switch n := utf8.RuneCountInString(password); {
	case n < MinPassword:
		return "", invalid("weak_password", "a password needs at least %d characters (got %d); a few words make a good one", MinPassword, n)
	case n > MaxPassword:
		return "", invalid("too_long", "a password is at most %d characters (got %d)", MaxPassword, n)
	}
	var hash string
	var err error
	if werr := withHashing(ctx, func() { hash, err = argon2id.CreateHash(password, passwordParams) }); werr != nil {
		return "", werr
	}
	if err != nil {
		return "", hub.AsError(err)
	}
	return hash, nil
}

// NeedsSetup reports whether nobody exists yet: the first visitor makes
// the admin's account.
func (a *Accounts) NeedsSetup(ctx context.Context) (bool, error) {
	us, err := a.store.Users(ctx)
	if err != nil {
		return false, hub.AsError(err)
	}
	return len(us) == 0, nil
}

// Setup makes the first person, the admin, with a password (§11.1), and
// signs them in (the secret is the cookie's value). Once anyone exists it
// is refused.
func (a *Accounts) Setup(ctx context.Context, handle, name, password string) (*hub.User, string, error) {
	setUp := &hub.Error{Kind: hub.KindForbidden, Code: "set_up", Msg: "this server is set up already; sign in instead"}
	// Refuse what is refused before the costly hash (and again below, in
	// the transaction, for setups racing each other).
	if need, err := a.NeedsSetup(ctx); err != nil || !need {
		return nil, "", cmp.Or(err, error(setUp))
	}
	if _, err := a.hub.NewPerson(handle, name); err != nil {
		return nil, "", err
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return nil, "", err
	}
	return a.createUser(ctx, handle, name, hash, func(_ hub.Tx, u *hub.User) error {
		if !u.Admin {
			return setUp
		}
		return nil
	})
}

// SignupMode is how people join: SignupInvite (the default) or SignupOpen.
func (a *Accounts) SignupMode(ctx context.Context) (string, error) {
	m, err := a.store.Meta(ctx, MetaSignup)
	if err != nil {
		return "", hub.AsError(err)
	}
	if m == "" {
		return SignupInvite, nil
	}
	return m, nil
}

// SetSignupMode is the admin choosing how people join.
func (a *Accounts) SetSignupMode(ctx context.Context, u *hub.User, mode string) error {
	if !u.Admin {
		return &hub.Error{Kind: hub.KindForbidden, Msg: "only the admin sets how people join"}
	}
	if mode != SignupInvite && mode != SignupOpen {
		return invalid("", "sign-up is %q or %q (got %q)", SignupInvite, SignupOpen, hub.Echo(mode))
	}
	return a.store.Update(ctx, func(tx hub.Tx) error { return tx.SetMeta(ctx, MetaSignup, mode) })
}

// CreateInvite is the admin (or the command line, with by nil) making a
// one-time invitation; its secret goes in the link and is shown once.
func (a *Accounts) CreateInvite(ctx context.Context, by *hub.User) (*hub.Invite, string, error) {
	if by != nil && !by.Admin {
		return nil, "", &hub.Error{Kind: hub.KindForbidden, Msg: "only the admin invites people"}
	}
	now := a.hub.Now()
	secret := hub.NewTokenSecret(InviteFlag)
	inv := &hub.Invite{ID: hub.NewID(hub.IDInvite, now), Hash: hub.HashToken(secret), CreatedAt: now, ExpiresAt: now.Add(InviteLifetime)}
	if by != nil {
		inv.CreatedBy = by.ID
	}
	if err := a.store.Update(ctx, func(tx hub.Tx) error { return tx.InsertInvite(ctx, inv) }); err != nil {
		return nil, "", err
	}
	return inv, secret, nil
}

// SignUp makes a person's account — with open sign-up, or with an unused,
// unexpired invitation (which it uses up) — and signs them in. One address
// (addr) makes at most a few accounts a minute.
func (a *Accounts) SignUp(ctx context.Context, handle, name, password, invite, addr string) (u *hub.User, secret string, err error) {
	refund, wait := a.signins.Take(a.hub.Now(), "signup:"+throttle.AddressKey(addr), signups)
	if refund == nil {
		return nil, "", hub.Throttled("accounts made from here", wait)
	}
	defer func() {
		if err != nil {
			refund() // only accounts made count
		}
	}()
	mode, err := a.SignupMode(ctx)
	if err != nil {
		return nil, "", err
	}
	if mode != SignupOpen && invite == "" {
		return nil, "", &hub.Error{Kind: hub.KindForbidden, Code: "invite_only", Msg: "this server takes new people by invitation only; ask its admin for an invitation link"}
	}
	// Refuse what is refused before the costly hash; the invitation is
	// checked again, and used up, in the transaction.
	if invite != "" {
		if _, err := a.validInvite(ctx, a.store, invite); err != nil {
			return nil, "", err
		}
	}
	if u, err := a.hub.NewPerson(handle, name); err != nil {
		return nil, "", err
	} else if _, err := a.store.UserByHandle(ctx, u.Handle); err == nil {
		return nil, "", &hub.Error{Kind: hub.KindConflict, Msg: "the handle " + u.Handle + " is taken; choose another"}
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return nil, "", err
	}
	return a.createUser(ctx, handle, name, hash, func(tx hub.Tx, u *hub.User) error {
		if invite == "" {
			return nil
		}
		inv, err := a.validInvite(ctx, tx, invite)
		if err != nil {
			return err
		}
		if err := tx.UseInvite(ctx, inv.ID, u.ID, a.hub.Now()); errors.Is(err, hub.ErrNoRows) {
			return errBadInvite
		} else if err != nil {
			return err
		}
		return nil
	})
}

var errBadInvite = &hub.Error{Kind: hub.KindForbidden, Code: "bad_invite", Msg: "this invitation link is not known, used, or expired; ask for a new one"}

// validInvite is the unused, unexpired invitation with this secret.
func (a *Accounts) validInvite(ctx context.Context, r hub.AccountReads, secret string) (*hub.Invite, error) {
	inv, err := r.InviteByHash(ctx, hub.HashToken(strings.TrimSpace(secret)))
	if errors.Is(err, hub.ErrNoRows) || (err == nil && (!inv.UsedAt.IsZero() || !a.hub.Now().Before(inv.ExpiresAt))) {
		return nil, errBadInvite
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	return inv, nil
}

// CheckInvite says whether an invitation link still works, for the
// sign-up page to say so before anyone fills it in.
func (a *Accounts) CheckInvite(ctx context.Context, secret string) error {
	_, err := a.validInvite(ctx, a.store, secret)
	return err
}

// createUser stores a person with a password hash, signed in, kept only
// if check then passes in the same transaction; the first person ever is
// the admin.
func (a *Accounts) createUser(ctx context.Context, handle, name, hash string, check func(hub.Tx, *hub.User) error) (*hub.User, string, error) {
	var secret string // the sign-in of the transaction's last run
	u, err := a.hub.CreatePersonWith(ctx, handle, name, func(tx hub.Tx, u *hub.User) error {
		if err := tx.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return err
		}
		if err := check(tx, u); err != nil {
			return err
		}
		var l *hub.Login
		secret, l = a.newLogin(u)
		return tx.InsertLogin(ctx, l)
	})
	if err != nil {
		return nil, "", err
	}
	return u, secret, nil
}

// SetPassword sets a person's password (palaver user password) and ends
// their sign-ins elsewhere.
func (a *Accounts) SetPassword(ctx context.Context, handle, password string) error {
	u, err := a.hub.User(ctx, handle)
	if err != nil {
		return err
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return err
	}
	err = a.store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return err
		}
		return tx.DeleteLogins(ctx, u.ID)
	})
	if err != nil {
		return hub.AsError(err)
	}
	return nil
}

// SignIn checks a person's password and starts a sign-in: its secret is
// the cookie's value, shown once. Failed attempts are throttled per
// address (addr, the client's), per account from that address, and per
// account; a refused or successful attempt costs nothing. A wrong handle,
// a wrong password and a person with no password yet are answered alike.
func (a *Accounts) SignIn(ctx context.Context, handle, password, addr string) (*hub.User, string, error) {
	now := a.hub.Now()
	wrong := &hub.Error{Kind: hub.KindUnauthenticated, Code: "bad_credentials",
		Msg: "that handle and password do not match; check both and try again (someone the admin made on the server first has no password until the admin sets one)"}
	refundAddr, wait := a.signins.Take(now, "addr:"+throttle.AddressKey(addr), perAddress)
	if refundAddr == nil {
		return nil, "", hub.Throttled("sign-in attempts", wait)
	}
	compare := func(hash string) (match bool, err error) {
		if werr := withHashing(ctx, func() { match, err = argon2id.ComparePasswordAndHash(password, hash) }); werr != nil {
			return false, werr
		}
		return match, err
	}
	u, err := a.store.UserByHandle(ctx, strings.ToLower(strings.TrimSpace(handle)))
	var hash string
	if err == nil {
		hash, err = a.store.PasswordHash(ctx, u.ID)
	}
	switch {
	case errors.Is(err, hub.ErrNoRows):
		compare(dummyHash()) // answer in the same time
		return nil, "", wrong
	case err != nil:
		refundAddr()
		return nil, "", hub.AsError(err)
	}
	refundAccount, wait := a.signins.TakeAll(now, map[string]throttle.Allowance{"user:" + u.ID + "\x00" + throttle.AddressKey(addr): perAccountAddress, "user:" + u.ID: perAccount})
	if refundAccount == nil {
		refundAddr()
		return nil, "", hub.Throttled("sign-in attempts", wait)
	}
	if hash == "" {
		compare(dummyHash())
		return nil, "", wrong
	}
	match, err := compare(hash)
	if err != nil {
		refundAddr()
		refundAccount()
		return nil, "", hub.AsError(err)
	}
	if !match {
		return nil, "", wrong
	}
	refundAddr()
	refundAccount()
	secret, l := a.newLogin(u)
	if err := a.store.Update(ctx, func(tx hub.Tx) error { return tx.InsertLogin(ctx, l) }); err != nil {
		return nil, "", err
	}
	return u, secret, nil
}

// newLogin is a new sign-in of the person and its secret, shown once: the
// cookie's value.
func (a *Accounts) newLogin(u *hub.User) (string, *hub.Login) {
	now := a.hub.Now()
	secret := hub.NewTokenSecret(LoginSecretFlag)
	return secret, &hub.Login{ID: hub.NewID(hub.IDLogin, now), Hash: hub.HashToken(secret), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(LoginLifetime), LastSeenAt: now}
}

// dummyHash is compared against when there is no hash to compare, so a
// wrong handle takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := argon2id.CreateHash("no such person", passwordParams)
	return h
})

// SignedIn is the person a sign-in's secret belongs to, while it lasts.
// Anything else is unauthenticated.
func (a *Accounts) SignedIn(ctx context.Context, secret string) (*hub.User, error) {
	gone := &hub.Error{Kind: hub.KindUnauthenticated, Msg: "not signed in, or the sign-in ended; sign in again"}
	if !strings.HasPrefix(secret, LoginSecretFlag) {
		return nil, gone
	}
	hash := hub.HashToken(secret)
	l, err := a.store.LoginByHash(ctx, hash)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && !a.hub.Now().Before(l.ExpiresAt)) {
		return nil, gone
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	u, err := a.store.UserByID(ctx, l.UserID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	if now := a.hub.Now(); now.Sub(l.LastSeenAt) >= touchEvery {
		if err := a.store.Update(ctx, func(tx hub.Tx) error { return tx.TouchLogin(ctx, l.ID, now) }); err != nil {
			a.log.Warn("recording a sign-in's use", "login", l.ID, "err", err)
		}
	}
	return u, nil
}

// SignOut ends the sign-in with this secret; an unknown one is no error.
func (a *Accounts) SignOut(ctx context.Context, secret string) error {
	l, err := a.store.LoginByHash(ctx, hub.HashToken(secret))
	if errors.Is(err, hub.ErrNoRows) {
		return nil
	}
	if err != nil {
		return hub.AsError(err)
	}
	return a.store.Update(ctx, func(tx hub.Tx) error { return tx.DeleteLogin(ctx, l.ID) })
}

// The sign-in allowances (§11.1). A person mistyping from their own
// address is stopped after five; an address guessing across accounts after
// twenty (a shared address, such as a proxy's, has room for many people);
// an account guessed at from many addresses after fifty — so failures
// from elsewhere do not lock its owner out quickly.
var (
	perAccountAddress = throttle.Allowance{Burst: 5, Every: time.Minute}
	perAddress        = throttle.Allowance{Burst: 20, Every: 15 * time.Second}
	perAccount        = throttle.Allowance{Burst: 50, Every: time.Minute}
	signups           = throttle.Allowance{Burst: 5, Every: time.Minute} // accounts made from one address
)
