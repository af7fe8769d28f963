package hub

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
	"golang.org/x/time/rate"
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

// throttle limits sign-in attempts by key: a few at once, then one a
// minute. It keeps only keys that have spent some of their allowance.
type throttle struct {
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

const (
	attemptsAtOnce = 5
	attemptsEvery  = time.Minute
)

// allow spends one attempt of each key at now, or says how long until one
// is left for all of them.
func (t *throttle) allow(now time.Time, keys ...string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		t.keys = map[string]*rate.Limiter{}
	}
	if len(t.keys) > 10000 { // forget the keys whose allowance is whole again
		for k, l := range t.keys {
			if l.TokensAt(now) >= attemptsAtOnce {
				delete(t.keys, k)
			}
		}
	}
	var wait time.Duration
	for _, k := range keys {
		l := t.keys[k]
		if l == nil {
			l = rate.NewLimiter(rate.Every(attemptsEvery), attemptsAtOnce)
			t.keys[k] = l
		}
		if r := l.ReserveN(now, 1); r.DelayFrom(now) > 0 {
			wait = max(wait, r.DelayFrom(now))
			r.CancelAt(now)
		}
	}
	if wait > 0 {
		return false, wait
	}
	return true, 0
}

// hashPassword refuses a password that is too short or too long, and
// hashes one that is not.
func hashPassword(password string) (string, error) {
	switch n := utf8.RuneCountInString(password); {
	case n < MinPassword:
		return "", invalid("weak_password", "a password needs at least %d characters (got %d); a few words make a good one", MinPassword, n)
	case n > MaxPassword:
		return "", invalid("too_long", "a password is at most %d characters (got %d)", MaxPassword, n)
	}
	hash, err := argon2id.CreateHash(password, passwordParams)
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

// Setup makes the first person, the admin, with a password (§11.1). Once
// anyone exists it is refused.
func (h *Hub) Setup(ctx context.Context, handle, name, password string) (*User, error) {
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	return h.createUser(ctx, handle, name, hash, func(_ Tx, u *User) error {
		if !u.Admin {
			return &Error{Kind: KindForbidden, Code: "set_up", Msg: "this server is set up already; sign in instead"}
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
		return invalid("", "sign-up is %q or %q (got %q)", SignupInvite, SignupOpen, cleanText(mode))
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.SetMeta(ctx, MetaSignup, mode) })
}

// CreateInvite is the admin (or the command line, with by nil) making a
// one-time invitation; its secret goes in the link and is shown once.
func (h *Hub) CreateInvite(ctx context.Context, by *User) (*Invite, string, error) {
	if by != nil && !by.Admin {
		return nil, "", &Error{Kind: KindForbidden, Msg: "only the admin invites people"}
	}
	now := h.now()
	secret := newTokenSecret(InviteFlag)
	inv := &Invite{ID: NewID(IDInvite, now), Hash: HashToken(secret), CreatedAt: now, ExpiresAt: now.Add(InviteLifetime)}
	if by != nil {
		inv.CreatedBy = by.ID
	}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.InsertInvite(ctx, inv) }); err != nil {
		return nil, "", err
	}
	return inv, secret, nil
}

// SignUp makes a person's account: with open sign-up, or with an unused,
// unexpired invitation (which it uses up).
func (h *Hub) SignUp(ctx context.Context, handle, name, password, invite string) (*User, error) {
	mode, err := h.SignupMode(ctx)
	if err != nil {
		return nil, err
	}
	if mode != SignupOpen && invite == "" {
		return nil, &Error{Kind: KindForbidden, Code: "invite_only", Msg: "this server takes new people by invitation only; ask its admin for an invitation link"}
	}
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	return h.createUser(ctx, handle, name, hash, func(tx Tx, u *User) error {
		if invite == "" {
			return nil
		}
		bad := &Error{Kind: KindForbidden, Code: "bad_invite", Msg: "this invitation link is not known, used, or expired; ask for a new one"}
		inv, err := tx.InviteByHash(ctx, HashToken(strings.TrimSpace(invite)))
		if errors.Is(err, ErrNoRows) || (err == nil && (!inv.UsedAt.IsZero() || !h.now().Before(inv.ExpiresAt))) {
			return bad
		}
		if err != nil {
			return err
		}
		if err := tx.UseInvite(ctx, inv.ID, u.ID, h.now()); errors.Is(err, ErrNoRows) {
			return bad
		} else if err != nil {
			return err
		}
		return nil
	})
}

// createUser stores a person with a password hash, kept only if check
// then passes in the same transaction; the first person ever is the admin.
func (h *Hub) createUser(ctx context.Context, handle, name, hash string, check func(Tx, *User) error) (*User, error) {
	u, err := h.newUser(handle, name)
	if err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := insertUser(ctx, tx, u); err != nil {
			return nil, err
		}
		if err := tx.SetPasswordHash(ctx, u.ID, hash); err != nil {
			return nil, err
		}
		return nil, check(tx, u)
	})
	if err != nil {
		return nil, userErr(err, u)
	}
	return u, nil
}

// SetPassword sets a person's password (palaver user password) and ends
// their sign-ins elsewhere.
func (h *Hub) SetPassword(ctx context.Context, handle, password string) error {
	u, err := h.User(ctx, handle)
	if err != nil {
		return err
	}
	hash, err := hashPassword(password)
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
// the cookie's value, shown once. Attempts are throttled per account and
// per address (addr, the client's); a wrong handle and a wrong password
// are answered alike.
func (h *Hub) SignIn(ctx context.Context, handle, password, addr string) (*User, string, error) {
	now := h.now()
	if ok, wait := h.signins.allow(now, "user:"+strings.ToLower(strings.TrimSpace(handle)), "addr:"+addr); !ok {
		secs := int(wait.Round(time.Second) / time.Second)
		return nil, "", &Error{Kind: KindRateLimited, Code: "throttled", Details: map[string]any{"retry_after_s": secs},
			Msg: "too many sign-in attempts; wait a minute and try again"}
	}
	wrong := &Error{Kind: KindUnauthenticated, Code: "bad_credentials", Msg: "that handle and password do not match; check both and try again"}
	u, err := h.store.UserByHandle(ctx, strings.ToLower(strings.TrimSpace(handle)))
	if errors.Is(err, ErrNoRows) {
		argon2id.ComparePasswordAndHash(password, dummyHash()) // answer in the same time
		return nil, "", wrong
	}
	if err != nil {
		return nil, "", AsError(err)
	}
	hash, err := h.store.PasswordHash(ctx, u.ID)
	if err != nil {
		return nil, "", AsError(err)
	}
	if hash == "" {
		argon2id.ComparePasswordAndHash(password, dummyHash())
		return nil, "", &Error{Kind: KindUnauthenticated, Code: "no_password", Msg: "this person has no password yet; set one with: palaver user password " + u.Handle}
	}
	match, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		return nil, "", AsError(err)
	}
	if !match {
		return nil, "", wrong
	}
	secret := newTokenSecret(LoginSecretFlag)
	l := &Login{ID: NewID(IDLogin, now), Hash: HashToken(secret), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(LoginLifetime), LastSeenAt: now}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.InsertLogin(ctx, l) }); err != nil {
		return nil, "", err
	}
	return u, secret, nil
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
