package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Scopes (§2).
const (
	ScopeRead     = "msg:read"
	ScopeWrite    = "msg:write"
	ScopeContacts = "contacts:read"
)

// AllScopes lists every scope, the default for a new token.
var AllScopes = []string{ScopeRead, ScopeWrite, ScopeContacts}

// Static agent token format (§2): "plv_" + 32 random bytes as 43 base62
// digits + a 6-digit base62 CRC-32 of those digits, so a mistyped token is
// refused without a database look-up.
const (
	AgentTokenPrefix = "plv_"
	// UserTokenPrefix starts a person's API token (§2, the REST API).
	UserTokenPrefix = "plu_"
	tokenBodyLen    = 43
	tokenSumLen     = 6
	base62          = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

func encodeBase62(n *big.Int, width int) string {
	out := make([]byte, width)
	b := new(big.Int).Set(n)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		b.DivMod(b, base, mod)
		out[i] = base62[mod.Int64()]
	}
	return string(out)
}

func tokenChecksum(body string) string {
	return encodeBase62(big.NewInt(int64(crc32.ChecksumIEEE([]byte(body)))), tokenSumLen)
}

// NewTokenSecret returns a fresh token with the given prefix.
func NewTokenSecret(prefix string) string {
	var raw [32]byte
	rand.Read(raw[:])
	body := encodeBase62(new(big.Int).SetBytes(raw[:]), tokenBodyLen)
	return prefix + body + tokenChecksum(body)
}

// CheckTokenFormat says what is wrong with a token's shape, or nil.
func CheckTokenFormat(token, prefix, kind string) error {
	if !strings.HasPrefix(token, prefix) {
		return errors.New("the token is malformed: " + kind + " token starts with " + prefix)
	}
	rest := token[len(prefix):]
	if len(rest) != tokenBodyLen+tokenSumLen || strings.Trim(rest, base62) != "" {
		return errors.New("the token is malformed: check that it was copied whole")
	}
	if tokenChecksum(rest[:tokenBodyLen]) != rest[tokenBodyLen:] {
		return errors.New("the token's checksum does not match: it was mistyped or cut")
	}
	return nil
}

// HashToken is the SHA-256 of a token, the only form stored.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// ParseScopes turns "msg:read,msg:write" into a sorted, de-duplicated list,
// refusing unknown scopes. An empty string means every scope.
func ParseScopes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return slices.Clone(AllScopes), nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(AllScopes, p) {
			return nil, invalid("", "unknown scope %q; the scopes are %s", p, strings.Join(AllScopes, ", "))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TokenSpec describes a token to mint.
type TokenSpec struct {
	Owner   string        // the owner's handle
	Agent   string        // the agent's slug
	Scopes  []string      // nil: every scope
	Expires time.Duration // 0: never; at most MaxTokenLifetime
	Name    string
}

// MaxTokenLifetime is the longest a token may be minted to live (ten years);
// a token may also never expire.
const MaxTokenLifetime = 3650 * 24 * time.Hour

// Days is n days as a Duration, or the longest Duration when n days do not
// fit in one (so that a huge count is refused as too long, not wrapped).
func Days(n int64) time.Duration {
	const day = 24 * time.Hour
	if n > math.MaxInt64/int64(day) || n < math.MinInt64/int64(day) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(n) * day
}

// checkExpiry refuses a lifetime that is negative or over MaxTokenLifetime.
func checkExpiry(d time.Duration) error {
	if d < 0 || d > MaxTokenLifetime {
		return invalid("", "a token's lifetime is up to %d days (or none: it never expires)", int(MaxTokenLifetime.Hours()/24))
	}
	return nil
}

// MintToken creates a static agent token (§2) and returns it with its secret,
// which is shown once and never stored.
func (h *Hub) MintToken(ctx context.Context, s TokenSpec) (*Token, string, error) {
	a, err := h.Agent(ctx, s.Owner+"/"+s.Agent)
	if err != nil {
		return nil, "", err
	}
	if a.Archived() {
		return nil, "", invalid("", "%s is archived; tokens cannot be minted for it", a.Handle())
	}
	name, err := checkText("name", s.Name, 0, MaxTitle)
	if err != nil {
		return nil, "", err
	}
	if err := checkExpiry(s.Expires); err != nil {
		return nil, "", err
	}
	scopes := s.Scopes
	if scopes == nil {
		scopes = slices.Clone(AllScopes)
	}
	if len(scopes) == 0 {
		return nil, "", invalid("", "a token needs at least one scope of %s", strings.Join(AllScopes, ", "))
	}
	secret := NewTokenSecret(AgentTokenPrefix)
	now := h.now()
	t := &Token{ID: NewID(IDToken, now), Hash: HashToken(secret), UserID: a.OwnerID, AgentID: a.ID,
		Name: name, Scopes: scopes, CreatedAt: now}
	if s.Expires > 0 {
		t.ExpiresAt = now.Add(s.Expires)
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.InsertToken(ctx, t) }); err != nil {
		return nil, "", AsError(err)
	}
	return t, secret, nil
}

// Tokens lists the owner's tokens, of one agent when agentSlug is not "".
func (h *Hub) Tokens(ctx context.Context, owner, agentSlug string) ([]*Token, error) {
	u, err := h.User(ctx, owner)
	if err != nil {
		return nil, err
	}
	agentID := ""
	if agentSlug != "" {
		a, err := h.Agent(ctx, owner+"/"+agentSlug)
		if err != nil {
			return nil, err
		}
		agentID = a.ID
	}
	ts, err := h.store.Tokens(ctx, u.ID, agentID)
	if err != nil {
		return nil, AsError(err)
	}
	return ts, nil
}

// APITokens lists the person's own API tokens (§2), not their agents'.
func (h *Hub) APITokens(ctx context.Context, u *User) ([]*Token, error) {
	ts, err := h.store.Tokens(ctx, u.ID, "")
	if err != nil {
		return nil, AsError(err)
	}
	return slices.DeleteFunc(ts, func(t *Token) bool { return t.AgentID != "" }), nil
}

// RevokeToken revokes a token by id; its next request gets 401.
func (h *Hub) RevokeToken(ctx context.Context, id string) (*Token, error) {
	t, err := h.store.TokenByID(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNoRows) {
			return nil, hinted(KindNotFound, "list them", Action{Name: ActionListTokens}, "no token has the id %q", id)
		}
		return nil, AsError(err)
	}
	if !t.RevokedAt.IsZero() {
		return t, nil
	}
	t.RevokedAt = h.now()
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.RevokeToken(ctx, id, t.RevokedAt) }); err != nil {
		return nil, AsError(err)
	}
	h.inboxChanged(t.AgentID) // a stream the token holds ends (§19)
	return t, nil
}

// Caller is an authenticated agent making a request.
type Caller struct {
	Agent   *Agent
	Owner   *User
	TokenID string
	Scopes  []string
}

// AgentHandle is the handle of the agent a username names for the caller
// (§10.5): a sibling's username is its slug, any other agent's its handle.
func (c *Caller) AgentHandle(username string) string {
	if strings.Contains(username, "/") {
		return username
	}
	return c.Owner.Handle + "/" + username
}

// Username is how the caller names the principal with this handle: a
// sibling by its slug, anyone else by the handle.
func (c *Caller) Username(handle string) string {
	if slug, ok := strings.CutPrefix(handle, c.Owner.Handle+"/"); ok {
		return slug
	}
	return handle
}

// Can reports whether the caller's token carries scope.
func (c *Caller) Can(scope string) bool { return slices.Contains(c.Scopes, scope) }

// Require returns a forbidden Error naming the missing scope, or nil (§2).
func (c *Caller) Require(scope string) error {
	if scope == "" || c.Can(scope) {
		return nil
	}
	return &Error{Kind: KindForbidden, Code: "missing_scope",
		Msg: fmt.Sprintf("this token lacks the %s scope that this call needs; ask your owner for a token with --scope %s",
			scope, strings.Join(append(slices.Clone(c.Scopes), scope), ","))}
}

// lookupToken checks a token's shape, finds it with its agent (nil for a
// person's token) and its user, and refuses a revoked or expired one or one
// of the other kind, each with a KindUnauthenticated Error saying what is
// wrong. A good token then spends one request of its rate (§15), or is
// refused with a KindRateLimited Error carrying retry_after_s.
func (h *Hub) lookupToken(ctx context.Context, token, prefix, kind string) (*Token, *Agent, *User, error) {
	unauth := func(msg string) error { return &Error{Kind: KindUnauthenticated, Msg: msg} }
	if token == "" {
		return nil, nil, nil, unauth("no bearer token: send Authorization: Bearer " + prefix + "…")
	}
	switch {
	case prefix == UserTokenPrefix && strings.HasPrefix(token, AgentTokenPrefix):
		return nil, nil, nil, hinted(KindUnauthenticated, "mint one", Action{Name: ActionMintPersonToken}, "this is an agent's token (plv_…); this takes a person's API token (plu_…)")
	case prefix == AgentTokenPrefix && strings.HasPrefix(token, UserTokenPrefix):
		return nil, nil, nil, hinted(KindUnauthenticated, "mint one", Action{Name: ActionMintAgentToken}, "this is a person's API token (plu_…); agents connect with an agent token (plv_…)")
	}
	if err := CheckTokenFormat(token, prefix, kind); err != nil {
		return nil, nil, nil, unauth(err.Error())
	}
	hash := HashToken(token)
	t, a, u, err := h.resolve(ctx, hash)
	if errors.Is(err, ErrNoRows) || (err == nil && subtle.ConstantTimeCompare(t.Hash, hash) != 1) {
		return nil, nil, nil, unauth("the token is not known to this server")
	}
	if err != nil {
		return nil, nil, nil, AsError(err)
	}
	now := h.now()
	switch {
	case a != nil && a.Archived():
		return nil, nil, nil, unauth("the agent " + a.Handle() + " is archived")
	case !t.RevokedAt.IsZero() && t.GrantID != "":
		return nil, nil, nil, unauth("the token was revoked; authorize again")
	case !t.RevokedAt.IsZero():
		return nil, nil, nil, unauth("the token was revoked; mint a new one")
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt) && t.GrantID != "":
		return nil, nil, nil, unauth("the access token expired; refresh it, or authorize again")
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return nil, nil, nil, unauth("the token expired; mint a new one")
	case (prefix == AgentTokenPrefix) != (a != nil):
		return nil, nil, nil, unauth("this is not " + kind + " token")
	}
	if err := h.admit(t.ID, now, 1); err != nil {
		return nil, nil, nil, err
	}
	return t, a, u, nil
}

// AuthenticateUser resolves a person's API token (plu_…) for the REST API
// (§2, §11.3), with the same refusals and request rate as Authenticate.
func (h *Hub) AuthenticateUser(ctx context.Context, token string) (*User, error) {
	u, _, err := h.AuthenticatePerson(ctx, token)
	return u, err
}

// AuthenticatePerson is AuthenticateUser that also names the token (its
// id), whose rate a request carrying several calls spends (SpendMore).
func (h *Hub) AuthenticatePerson(ctx context.Context, token string) (*User, string, error) {
	t, _, u, err := h.lookupToken(ctx, token, UserTokenPrefix, "a person's API")
	if err != nil {
		return nil, "", err
	}
	h.touchToken(ctx, t, h.now())
	return u, t.ID, nil
}

// MintUserToken creates a person's API token; the secret is shown once.
func (h *Hub) MintUserToken(ctx context.Context, owner, name string, expires time.Duration) (*Token, string, error) {
	u, err := h.User(ctx, owner)
	if err != nil {
		return nil, "", err
	}
	if name, err = checkText("name", name, 0, MaxTitle); err != nil {
		return nil, "", err
	}
	if err := checkExpiry(expires); err != nil {
		return nil, "", err
	}
	secret := NewTokenSecret(UserTokenPrefix)
	now := h.now()
	t := &Token{ID: NewID(IDToken, now), Hash: HashToken(secret), UserID: u.ID, Name: name, CreatedAt: now}
	if expires > 0 {
		t.ExpiresAt = now.Add(expires)
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.InsertToken(ctx, t) }); err != nil {
		return nil, "", AsError(err)
	}
	return t, secret, nil
}

// RevokeOwnToken is a person revoking one of their tokens; another's is
// not_found.
func (h *Hub) RevokeOwnToken(ctx context.Context, u *User, id string) (*Token, error) {
	t, err := h.store.TokenByID(ctx, id)
	if err != nil || t.UserID != u.ID {
		return nil, notFound("%s has no token %q", u.Handle, echo(id))
	}
	return h.RevokeToken(ctx, id)
}

// touchEvery limits how often a token's last-used time is written.
const touchEvery = time.Minute

// Authenticate resolves a bearer token to its agent (§2). Every failure is a
// KindUnauthenticated Error whose message says what is wrong: malformed, bad
// checksum, unknown, revoked, expired, or the agent archived. A token over
// its request rate (§15) gets a KindRateLimited Error with retry_after_s.
func (h *Hub) Authenticate(ctx context.Context, token string) (*Caller, error) {
	return h.AuthenticateFor(ctx, token, "", "")
}

// AuthenticateFor is Authenticate for a request to a resource (an MCP
// endpoint's URL, or the A2A resource's, A2AResourcePath: the server's
// base URL and the path, joined only when an OAuth token needs
// checking): an OAuth token issued for another resource is refused too
// (RFC 8707, §10.6; a trailing slash aside), unless it was issued for the
// server's base URL itself, the resource every endpoint is part of. A
// static token serves every resource.
func (h *Hub) AuthenticateFor(ctx context.Context, token, base, path string) (*Caller, error) {
	t, a, owner, err := h.lookupToken(ctx, token, AgentTokenPrefix, "an agent")
	if err != nil {
		return nil, err
	}
	if resource := base + path; t.Resource != "" && resource != "" && !SameResource(t.Resource, resource) && !SameResource(t.Resource, base) {
		return nil, &Error{Kind: KindUnauthenticated, Msg: "this token was issued for " + t.Resource + ", not for " + resource + "; authorize again for this endpoint"}
	}
	h.touchToken(ctx, t, h.now())
	return &Caller{Agent: a, Owner: owner, TokenID: t.ID, Scopes: t.Scopes}, nil
}

// touchToken records the token's use at most once a minute per process, so
// authentication adds no write to most requests.
func (h *Hub) touchToken(ctx context.Context, t *Token, now time.Time) {
	h.mu.Lock()
	last, ok := h.touched[t.ID]
	if !ok {
		last = t.LastUsedAt
	}
	due := now.Sub(last) >= touchEvery
	if due {
		h.touched[t.ID] = now
	}
	h.mu.Unlock()
	if !due {
		return
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.TouchToken(ctx, t.ID, now) }); err != nil {
		h.log.Warn("recording token use", "token", t.ID, "err", err)
	}
}

// TokenReads are the queries of tokens (Reader embeds them).
type TokenReads interface {
	// TokenByHash finds a token with, in the same read, its agent (nil for
	// a person's token) and its user (an agent token's owner).
	TokenByHash(ctx context.Context, hash []byte) (*Token, *Agent, *User, error)
	// AuthGeneration is a number that moves, in the same transaction,
	// with every change to what a token resolves to (its token, agent or
	// user changed or deleted), from any process: while it stands, what
	// TokenByHash answered stands too.
	AuthGeneration(ctx context.Context) (int64, error)
	TokenByID(ctx context.Context, id string) (*Token, error)
	// Tokens lists a user's static tokens (not OAuth ones), of one agent
	// when agentID is not "".
	Tokens(ctx context.Context, userID, agentID string) ([]*Token, error)
}

// TokenWrites are the writes of tokens (Tx embeds them).
type TokenWrites interface {
	InsertToken(ctx context.Context, t *Token) error
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// RevokeAgentTokens revokes every token of the agent not revoked yet,
	// and the OAuth grants that let clients act as it.
	RevokeAgentTokens(ctx context.Context, agentID string, at time.Time) error
	TouchToken(ctx context.Context, id string, at time.Time) error
	// UseToken revokes a token not revoked yet, keeping successor with it
	// (nil: nothing); ErrNoRows when it was revoked.
	UseToken(ctx context.Context, id string, at time.Time, successor []byte) error
	// ForgetSuccessors drops what the grant's tokens used before
	// usedBefore keep of their successors.
	ForgetSuccessors(ctx context.Context, grantID string, usedBefore time.Time) error
}
