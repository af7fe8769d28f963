package hub

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// People (DESIGN.md §1): created by an admin, found by handle.

// CreateUser adds a person (§1), with no password (palaver user create);
// name is a display label. The first person ever is the admin.
func (h *Hub) CreateUser(ctx context.Context, handle, name string) (*User, error) {
	u, err := h.newUser(handle, name)
	if err != nil {
		return nil, err
	}
	if err := h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, insertUser(ctx, tx, u) }); err != nil {
		return nil, userErr(err, u)
	}
	return u, nil
}

// newUser checks a new person's handle and name.
func (h *Hub) newUser(handle, name string) (*User, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug != "" {
		return nil, invalid("", "a person's {handle} has no slash: %q", handle)
	}
	if name, err = checkText("name", strings.TrimSpace(name), 0, MaxTitle); err != nil {
		return nil, err
	}
	return &User{ID: NewID(IDUser, h.now()), Handle: owner, Name: name, CreatedAt: h.now()}, nil
}

// insertUser stores a new person; the first one ever is the admin.
func insertUser(ctx context.Context, tx Tx, u *User) error {
	if err := tx.LockUsers(ctx); err != nil {
		return err
	}
	us, err := tx.Users(ctx)
	if err != nil {
		return err
	}
	u.Admin = len(us) == 0
	return tx.InsertUser(ctx, u)
}

// userErr says a taken handle is taken.
func userErr(err error, u *User) error {
	if errors.Is(err, ErrDuplicate) {
		return &Error{Kind: KindConflict, Msg: "the {handle} " + u.Handle + " is taken; choose another"}
	}
	return err
}

// User returns a person by handle.
func (h *Hub) User(ctx context.Context, handle string) (*User, error) {
	owner, slug, err := ParseHandle(handle)
	if err != nil {
		return nil, err
	}
	if slug != "" {
		return nil, invalid("", "%q is an agent's {handle}; give the person's {handle} (before the slash)", handle)
	}
	u, err := h.store.UserByHandle(ctx, owner)
	if err != nil {
		if errors.Is(err, ErrNoRows) {
			return nil, hinted(KindNotFound, "create one", Action{ActionCreatePerson, map[string]string{"handle": owner}}, "no person has the {handle} %q", owner)
		}
		return nil, AsError(err)
	}
	return u, nil
}

// UserByID returns a person by id.
func (h *Hub) UserByID(ctx context.Context, id string) (*User, error) {
	u, err := h.store.UserByID(ctx, id)
	if err != nil {
		return nil, lookupErr(err, "no person has the id %q", id)
	}
	return u, nil
}

// MaxUserName is the most code points a person's display name may hold.
const MaxUserName = 100

// MaxEmail is the longest email a profile takes (RFC 5321's path limit).
const MaxEmail = 254

// UpdateUserEmail sets the email on u's profile (§10.5): one address, as
// they write it, or blank for none. Nobody verifies it; it is shown to u
// and to u's contacts.
func (h *Hub) UpdateUserEmail(ctx context.Context, u *User, email string) (*User, error) {
	email = strings.TrimSpace(email)
	if email != "" {
		if n := utf8.RuneCountInString(email); n > MaxEmail {
			return nil, invalid("", "email is %d characters; the limit is %d", n, MaxEmail)
		}
		a, err := mail.ParseAddress(email)
		if err != nil || a.Name != "" || a.Address != email {
			return nil, invalid("", "email %q is not one address: write it like alice@example.com, or leave it blank for none", echo(email))
		}
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.SetUserEmail(ctx, u.ID, email) }); err != nil {
		return nil, AsError(err)
	}
	out := *u
	out.Email = email
	return &out, nil
}

// UserReads are the queries of users (Reader embeds them).
type UserReads interface {
	UserByID(ctx context.Context, id string) (*User, error)
	UserByHandle(ctx context.Context, handle string) (*User, error)
	// Users lists every person, oldest first.
	Users(ctx context.Context) ([]*User, error)
}

// UserWrites are the writes of users (Tx embeds them).
type UserWrites interface {
	// LockUsers holds off other new people until the transaction ends, so
	// only the first is the admin (a no-op where one writer commits
	// everything).
	LockUsers(ctx context.Context) error
	InsertUser(ctx context.Context, u *User) error
	// SetUserName stores a person's display name.
	SetUserName(ctx context.Context, userID, name string) error
	// SetUserEmail stores the email on a person's profile ("" for none).
	SetUserEmail(ctx context.Context, userID, email string) error
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
	// LoginsOf lists the person's sign-ins, the last used first.
	LoginsOf(ctx context.Context, userID string) ([]*Login, error)
	// OpenInvites lists the invitations neither used nor expired at now,
	// the newest first.
	OpenInvites(ctx context.Context, now time.Time) ([]*Invite, error)
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
	// DeleteLoginsExcept ends every sign-in of the person but keepID.
	DeleteLoginsExcept(ctx context.Context, userID, keepID string) error
	InsertInvite(ctx context.Context, inv *Invite) error
	// UseInvite marks an unused invite used; ErrNoRows when it was used.
	UseInvite(ctx context.Context, id, userID string, at time.Time) error
	// DeleteInvite revokes an unused invitation; ErrNoRows when there is
	// none unused with that id.
	DeleteInvite(ctx context.Context, id string) error
}

// NewPerson checks a new person's handle and name, for a leaf that makes
// people (internal/accounts) to refuse what is refused before its costly
// work.
func (h *Hub) NewPerson(handle, name string) (*User, error) { return h.newUser(handle, name) }

// CreatePersonWith stores a new person, as CreateUser does (the first one
// ever is the admin), kept only if also then passes in the same
// transaction: internal/accounts stores their password and first sign-in
// with them.
func (h *Hub) CreatePersonWith(ctx context.Context, handle, name string, also func(tx Tx, u *User) error) (*User, error) {
	u, err := h.newUser(handle, name)
	if err != nil {
		return nil, err
	}
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := insertUser(ctx, tx, u); err != nil {
			return nil, err
		}
		return nil, also(tx, u)
	})
	if err != nil {
		return nil, userErr(err, u)
	}
	return u, nil
}
