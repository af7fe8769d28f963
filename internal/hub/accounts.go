package hub

import (
	"cmp"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/palaverhq/palaver/internal/throttle"

	"github.com/alexedwards/argon2id"
)

// Accounts (§11.1): people sign in to the dashboard with a password. The
// first person is the admin, made by first-run setup (or the command line);
// others join by open sign-up or an invitation link, as the admin sets.
// Passwords are hashed with argon2id; sign-ins are throttled per account and
// per address; each sign-in is a row of its own, so every replica knows it.

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
		return &Error{Kind: KindRateLimited, Msg: "the server is busy checking passwords; try again in a moment", Details: map[string]any{"retry_after_s": 1}}
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
		return "", AsError(err)
	}
	return hash, nil
}

// NeedsSetup reports whether nobody exists yet: the first visitor makes
// the admin's account.
func (h *Hub) NeedsSetup(ctx context.Context) (bool, error) {
	us, err := h.store.Users(ctx)
	if err != nil {
		return false, AsError(err)
	}
	return len(us) == 0, nil
}

// Setup makes the first person, the admin, with a password (§11.1), and
// signs them in (the secret is the cookie's value). Once anyone exists it
// is refused.
func (h *Hub) Setup(ctx context.Context, handle, name, password string) (*User, string, error) {
	setUp := &Error{Kind: KindForbidden, Code: "set_up", Msg: "this server is set up already; sign in instead"}
	// Refuse what is refused before the costly hash (and again below, in
	// the transaction, for setups racing each other).
	if need, err := h.NeedsSetup(ctx); err != nil || !need {
		return nil, "", cmp.Or(err, error(setUp))
	}
	if _, err := h.newUser(handle, name); err != nil {
		return nil, "", err
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return nil, "", err
	}
	return h.createUser(ctx, handle, name, hash, func(_ Tx, u *User) error {
		if !u.Admin {
			return setUp
		}
		return nil
	})
}

// SignupMode is how people join: SignupInvite (the default) or SignupOpen.
func (h *Hub) SignupMode(ctx context.Context) (string, error) {
	m, err := h.store.Meta(ctx, MetaSignup)
	if err != nil {
		return "", AsError(err)
	}
	if m == "" {
		return SignupInvite, nil
	}
	return m, nil
}

// SetSignupMode is the admin choosing how people join.
func (h *Hub) SetSignupMode(ctx context.Context, u *User, mode string) error {
	if !u.Admin {
		return &Error{Kind: KindForbidden, Msg: "only the admin sets how people join"}
	}
	if mode != SignupInvite && mode != SignupOpen {
		return invalid("", "sign-up is %q or %q (got %q)", SignupInvite, SignupOpen, echo(mode))
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.SetMeta(ctx, MetaSignup, mode) })
}

// MetaPublicURL is the URL the last server to start said people reach it
// at, so the command line's links (palaver user invite) name the server's
// real address rather than the default one.
const MetaPublicURL = "public_url"

// RecordPublicURL is a starting server saying where people reach it.
func (h *Hub) RecordPublicURL(ctx context.Context, url string) error {
	return h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.SetMeta(ctx, MetaPublicURL, url) })
}

// PublicURL is the URL the last server to start recorded ("" when none
// has).
func (h *Hub) PublicURL(ctx context.Context) (string, error) {
	url, err := h.store.Meta(ctx, MetaPublicURL)
	if err != nil {
		return "", AsError(err)
	}
	return url, nil
}

// CreateInvite is the admin (or the command line, with by nil) making a
// one-time invitation; its secret goes in the link and is shown once.
func (h *Hub) CreateInvite(ctx context.Context, by *User) (*Invite, string, error) {
	if by != nil && !by.Admin {
		return nil, "", &Error{Kind: KindForbidden, Msg: "only the admin invites people"}
	}
	now := h.now()
	secret := NewTokenSecret(InviteFlag)
	inv := &Invite{ID: NewID(IDInvite, now), Hash: HashToken(secret), CreatedAt: now, ExpiresAt: now.Add(InviteLifetime)}
	if by != nil {
		inv.CreatedBy = by.ID
	}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.InsertInvite(ctx, inv) }); err != nil {
		return nil, "", err
	}
	return inv, secret, nil
}

// SignUp makes a person's account — with open sign-up, or with an unused,
// unexpired invitation (which it uses up) — and signs them in. One address
// (addr) makes at most a few accounts a minute.
func (h *Hub) SignUp(ctx context.Context, handle, name, password, invite, addr string) (u *User, secret string, err error) {
	refund, wait := h.signins.Take(h.now(), "signup:"+throttle.AddressKey(addr), signups)
	if refund == nil {
		return nil, "", Throttled("accounts made from here", wait)
	}
	defer func() {
		if err != nil {
			refund() // only accounts made count
		}
	}()
	mode, err := h.SignupMode(ctx)
	if err != nil {
		return nil, "", err
	}
	if mode != SignupOpen && invite == "" {
		return nil, "", &Error{Kind: KindForbidden, Code: "invite_only", Msg: "this server takes new people by invitation only; ask its admin for an invitation link"}
	}
	// Refuse what is refused before the costly hash; the invitation is
	// checked again, and used up, in the transaction.
	if invite != "" {
		if _, err := h.validInvite(ctx, h.store, invite); err != nil {
			return nil, "", err
		}
	}
	if u, err := h.newUser(handle, name); err != nil {
		return nil, "", err
	} else if _, err := h.store.UserByHandle(ctx, u.Handle); err == nil {
		return nil, "", userErr(ErrDuplicate, u)
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return nil, "", err
	}
	return h.createUser(ctx, handle, name, hash, func(tx Tx, u *User) error {
		if invite == "" {
			return nil
		}
		inv, err := h.validInvite(ctx, tx, invite)
		if err != nil {
			return err
		}
		if err := tx.UseInvite(ctx, inv.ID, u.ID, h.now()); errors.Is(err, ErrNoRows) {
			return errBadInvite
		} else if err != nil {
			return err
		}
		return nil
	})
}

var errBadInvite = &Error{Kind: KindForbidden, Code: "bad_invite", Msg: "this invitation link is not known, used, or expired; ask for a new one"}

// validInvite is the unused, unexpired invitation with this secret.
func (h *Hub) validInvite(ctx context.Context, r Reader, secret string) (*Invite, error) {
	inv, err := r.InviteByHash(ctx, HashToken(strings.TrimSpace(secret)))
	if errors.Is(err, ErrNoRows) || (err == nil && (!inv.UsedAt.IsZero() || !h.now().Before(inv.ExpiresAt))) {
		return nil, errBadInvite
	}
	if err != nil {
		return nil, AsError(err)
	}
	return inv, nil
}

// CheckInvite says whether an invitation link still works, for the
// sign-up page to say so before anyone fills it in.
func (h *Hub) CheckInvite(ctx context.Context, secret string) error {
	_, err := h.validInvite(ctx, h.store, secret)
	return err
}

// createUser stores a person with a password hash, signed in, kept only
// if check then passes in the same transaction; the first person ever is
// the admin.
func (h *Hub) createUser(ctx context.Context, handle, name, hash string, check func(Tx, *User) error) (*User, string, error) {
	u, err := h.newUser(handle, name)
	if err != nil {
		return nil, "", err
	}
	secret, l := h.newLogin(u)
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := insertUser(ctx, tx, u); err != nil {
			return nil, err
		}
		if err := tx.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return nil, err
		}
		if err := check(tx, u); err != nil {
			return nil, err
		}
		return nil, tx.InsertLogin(ctx, l)
	})
	if err != nil {
		return nil, "", userErr(err, u)
	}
	return u, secret, nil
}

// SetPassword sets a person's password (palaver user password) and ends
// their sign-ins elsewhere.
func (h *Hub) SetPassword(ctx context.Context, handle, password string) error {
	u, err := h.User(ctx, handle)
	if err != nil {
		return err
	}
	hash, err := hashPassword(ctx, password)
	if err != nil {
		return err
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return nil, err
		}
		return nil, tx.DeleteLogins(ctx, u.ID)
	})
}

// SignIn checks a person's password and starts a sign-in: its secret is
// the cookie's value, shown once. Failed attempts are throttled per
// address (addr, the client's), per account from that address, and per
// account; a refused or successful attempt costs nothing. A wrong handle,
// a wrong password and a person with no password yet are answered alike.
func (h *Hub) SignIn(ctx context.Context, handle, password, addr string) (*User, string, error) {
	now := h.now()
	wrong := &Error{Kind: KindUnauthenticated, Code: "bad_credentials",
		Msg: "that handle and password do not match; check both and try again (someone made on the command line first needs: palaver user password HANDLE)"}
	refundAddr, wait := h.signins.Take(now, "addr:"+throttle.AddressKey(addr), perAddress)
	if refundAddr == nil {
		return nil, "", Throttled("sign-in attempts", wait)
	}
	compare := func(hash string) (match bool, err error) {
		if werr := withHashing(ctx, func() { match, err = argon2id.ComparePasswordAndHash(password, hash) }); werr != nil {
			return false, werr
		}
		return match, err
	}
	u, err := h.store.UserByHandle(ctx, strings.ToLower(strings.TrimSpace(handle)))
	var hash string
	if err == nil {
		hash, err = h.store.PasswordHash(ctx, u.ID)
	}
	switch {
	case errors.Is(err, ErrNoRows):
		compare(dummyHash()) // answer in the same time
		return nil, "", wrong
	case err != nil:
		refundAddr()
		return nil, "", AsError(err)
	}
	refundAccount, wait := h.signins.TakeAll(now, map[string]throttle.Allowance{"user:" + u.ID + "\x00" + throttle.AddressKey(addr): perAccountAddress, "user:" + u.ID: perAccount})
	if refundAccount == nil {
		refundAddr()
		return nil, "", Throttled("sign-in attempts", wait)
	}
	if hash == "" {
		compare(dummyHash())
		return nil, "", wrong
	}
	match, err := compare(hash)
	if err != nil {
		refundAddr()
		refundAccount()
		return nil, "", AsError(err)
	}
	if !match {
		return nil, "", wrong
	}
	refundAddr()
	refundAccount()
	secret, l := h.newLogin(u)
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.InsertLogin(ctx, l) }); err != nil {
		return nil, "", err
	}
	return u, secret, nil
}

// newLogin is a new sign-in of the person and its secret, shown once: the
// cookie's value.
func (h *Hub) newLogin(u *User) (string, *Login) {
	now := h.now()
	secret := NewTokenSecret(LoginSecretFlag)
	return secret, &Login{ID: NewID(IDLogin, now), Hash: HashToken(secret), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(LoginLifetime), LastSeenAt: now}
}

// dummyHash is compared against when there is no hash to compare, so a
// wrong handle takes as long as a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := argon2id.CreateHash("no such person", passwordParams)
	return h
})

// SignedIn is the person a sign-in's secret belongs to, while it lasts.
// Anything else is unauthenticated.
func (h *Hub) SignedIn(ctx context.Context, secret string) (*User, error) {
	gone := &Error{Kind: KindUnauthenticated, Msg: "not signed in, or the sign-in ended; sign in again"}
	if !strings.HasPrefix(secret, LoginSecretFlag) {
		return nil, gone
	}
	hash := HashToken(secret)
	l, err := h.store.LoginByHash(ctx, hash)
	if errors.Is(err, ErrNoRows) || (err == nil && !h.now().Before(l.ExpiresAt)) {
		return nil, gone
	}
	if err != nil {
		return nil, AsError(err)
	}
	u, err := h.store.UserByID(ctx, l.UserID)
	if err != nil {
		return nil, AsError(err)
	}
	if now := h.now(); now.Sub(l.LastSeenAt) >= touchEvery {
		if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.TouchLogin(ctx, l.ID, now) }); err != nil {
			h.log.Warn("recording a sign-in's use", "login", l.ID, "err", err)
		}
	}
	return u, nil
}

// SignOut ends the sign-in with this secret; an unknown one is no error.
func (h *Hub) SignOut(ctx context.Context, secret string) error {
	l, err := h.store.LoginByHash(ctx, HashToken(secret))
	if errors.Is(err, ErrNoRows) {
		return nil
	}
	if err != nil {
		return AsError(err)
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.DeleteLogin(ctx, l.ID) })
}

// Users lists every person, oldest first: for the admin, or the command
// line (by nil: palaver user list).
func (h *Hub) Users(ctx context.Context, by *User) ([]*User, error) {
	if by != nil && !by.Admin {
		return nil, &Error{Kind: KindForbidden, Msg: "only the admin lists everyone"}
	}
	us, err := h.store.Users(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	return us, nil
}

// AccountReads are the queries of accounts (Reader embeds them).
type AccountReads interface {
	// PasswordHash is the person's password hash ("" when none is set).
	PasswordHash(ctx context.Context, userID string) (string, error)
	// LoginByHash finds a dashboard sign-in by its secret's hash.
	LoginByHash(ctx context.Context, hash []byte) (*Login, error)
	InviteByHash(ctx context.Context, hash []byte) (*Invite, error)
}

// AccountWrites are the writes of accounts (Tx embeds them).
type AccountWrites interface {
	SetPasswordHash(ctx context.Context, userID, hash string) error
	InsertLogin(ctx context.Context, l *Login) error
	// TouchLogin records a sign-in's last use.
	TouchLogin(ctx context.Context, id string, at time.Time) error
	DeleteLogin(ctx context.Context, id string) error
	// DeleteLogins ends every sign-in of the person (a new password).
	DeleteLogins(ctx context.Context, userID string) error
	InsertInvite(ctx context.Context, inv *Invite) error
	// UseInvite marks an unused invite used; ErrNoRows when it was used.
	UseInvite(ctx context.Context, id, userID string, at time.Time) error
}
