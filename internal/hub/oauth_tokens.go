package hub

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"time"
)

// Tokens (§10.6): the code traded for an access token of an hour and a
// refresh token that rotates on every use; a used one sent again gets the
// same new pair within RefreshGrace (a client refreshing in parallel) and
// revokes its family after; RFC 7009 revocation.

// TokenRequest is a token request (RFC 6749 §4.1.3, §6).
type TokenRequest struct {
	GrantType    string
	ClientID     string
	Code         string
	RedirectURI  string
	CodeVerifier string
	RefreshToken string
	Resource     string
	Scope        string
}

// IssuedTokens is a token response: an access token (a bearer agent
// token), the refresh token that replaces the one used, their scopes.
type IssuedTokens struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    time.Duration
	Scopes       []string
}

// ExchangeToken answers a token request: an authorization code (with its
// PKCE verifier, the same redirect URI and client), or a refresh token,
// which rotates — the one sent stops working: sent again within
// RefreshGrace it gets the same new tokens, later it revokes every token of
// its grant (§10.6). Refusals carry RFC 6749 codes.
func (h *Hub) ExchangeToken(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	switch r.GrantType {
	case "authorization_code":
		return h.exchangeCode(ctx, r)
	case "refresh_token":
		return h.refresh(ctx, r)
	case "":
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "grant_type is missing")
	}
	return nil, oauthErr(KindInvalid, OAuthUnsupportedGrant, "grant_type %q is not supported; use authorization_code or refresh_token", echo(r.GrantType))
}

var errBadGrant = func(msg string) error { return oauthErr(KindInvalid, OAuthInvalidGrant, "%s", msg) }

func (h *Hub) exchangeCode(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	if r.ClientID == "" {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if r.Code == "" || r.CodeVerifier == "" {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "code and code_verifier are required")
	}
	if !strings.HasPrefix(r.Code, codePrefix) {
		return nil, errBadGrant("the authorization code is not known")
	}
	hash := HashToken(r.Code)
	code, err := h.store.OAuthCodeByHash(ctx, hash)
	if errors.Is(err, ErrNoRows) {
		return nil, errBadGrant("the authorization code is not known")
	}
	if err != nil {
		return nil, AsError(err)
	}
	g, err := h.store.OAuthGrant(ctx, code.GrantID)
	if err != nil {
		return nil, AsError(err)
	}
	now := h.now()
	switch {
	case g.ClientID != r.ClientID:
		return nil, errBadGrant("the authorization code was issued to another client")
	case !code.UsedAt.IsZero():
		// A code used twice was likely stolen: what it gave is revoked too
		// (RFC 6749 §4.1.2).
		if err := h.revokeGrant(ctx, g.ID); err != nil {
			return nil, err
		}
		return nil, errBadGrant("the authorization code was already used; the tokens it gave are revoked")
	case !now.Before(code.ExpiresAt):
		return nil, errBadGrant("the authorization code expired; authorize again")
	case !g.RevokedAt.IsZero():
		return nil, errBadGrant("the authorization was revoked")
	case r.RedirectURI != g.RedirectURI:
		return nil, errBadGrant("redirect_uri is not the one the authorization request named")
	case !validVerifier(r.CodeVerifier) || subtle.ConstantTimeCompare([]byte(s256(r.CodeVerifier)), []byte(code.Challenge)) != 1:
		return nil, errBadGrant("the code_verifier does not match the code_challenge")
	case r.Resource != "" && !SameResource(r.Resource, g.Resource):
		return nil, oauthErr(KindInvalid, OAuthInvalidTarget, "the authorization was for the resource %s, not %q", g.Resource, echo(r.Resource))
	}
	var out *IssuedTokens
	err = h.store.Update(ctx, func(tx Tx) error {
		if err := tx.UseOAuthCode(ctx, hash, now); err != nil {
			if errors.Is(err, ErrNoRows) {
				return errBadGrant("the authorization code was already used")
			}
			return err
		}
		out = newIssued(g.Scopes)
		return h.issue(ctx, tx, g, out, now)
	})
	if err != nil {
		return nil, AsError(err)
	}
	return out, nil
}

// newIssued is a new access token and refresh token with these scopes.
func newIssued(scopes []string) *IssuedTokens {
	return &IssuedTokens{AccessToken: newTokenSecret(AgentTokenPrefix), RefreshToken: newTokenSecret(RefreshTokenPrefix),
		ExpiresIn: AccessTokenLifetime, Scopes: scopes}
}

// issue stores the new access token and refresh token of a grant.
func (h *Hub) issue(ctx context.Context, tx Tx, g *OAuthGrant, out *IssuedTokens, now time.Time) error {
	a, err := tx.AgentByID(ctx, g.AgentID)
	if err != nil {
		return err
	}
	if a.Archived() {
		return errArchived(a)
	}
	c, err := tx.OAuthClient(ctx, g.ClientID)
	if err != nil {
		return err
	}
	for _, t := range []*Token{
		{Hash: HashToken(out.AccessToken), Scopes: out.Scopes, ExpiresAt: now.Add(AccessTokenLifetime)},
		{Hash: HashToken(out.RefreshToken), Scopes: g.Scopes, ExpiresAt: now.Add(RefreshTokenLifetime)},
	} {
		t.ID, t.UserID, t.AgentID, t.Name, t.CreatedAt, t.GrantID, t.Resource = NewID(IDToken, now), g.UserID, g.AgentID, c.Label(), now, g.ID, g.Resource
		if err := tx.InsertToken(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// errArchived refuses tokens for an archived agent: its credentials ended
// when it was archived (§1), which no client is to take for reuse.
func errArchived(a *Agent) error {
	return errBadGrant("the agent " + a.Handle() + " is archived, which ended its tokens; its owner can bring it back on the dashboard, then authorize this client again")
}

func (h *Hub) refresh(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	if r.ClientID == "" {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if checkTokenFormat(r.RefreshToken, RefreshTokenPrefix, "a refresh") != nil {
		return nil, errBadGrant("the refresh token is not known")
	}
	hash := HashToken(r.RefreshToken)
	t, a, _, err := h.store.TokenByHash(ctx, hash)
	if errors.Is(err, ErrNoRows) || (err == nil && t.GrantID == "") {
		return nil, errBadGrant("the refresh token is not known")
	}
	if err != nil {
		return nil, AsError(err)
	}
	g, err := h.store.OAuthGrant(ctx, t.GrantID)
	if err != nil {
		return nil, AsError(err)
	}
	now := h.now()
	switch {
	case g.ClientID != r.ClientID:
		return nil, errBadGrant("the refresh token was issued to another client")
	case a != nil && a.Archived():
		// Archiving revoked the grant and its tokens: nobody reused one.
		return nil, errArchived(a)
	case !g.RevokedAt.IsZero():
		return nil, errBadGrant("the authorization was revoked; authorize again")
	case !t.RevokedAt.IsZero():
		return h.refreshAgain(ctx, g, t, r.RefreshToken, now)
	case !now.Before(t.ExpiresAt):
		return nil, errBadGrant("the refresh token expired; authorize again")
	case r.Resource != "" && !SameResource(r.Resource, g.Resource):
		return nil, oauthErr(KindInvalid, OAuthInvalidTarget, "the authorization was for the resource %s, not %q", g.Resource, echo(r.Resource))
	}
	scopes := g.Scopes
	if r.Scope != "" {
		scopes = nil
		for _, s := range strings.Fields(r.Scope) {
			if !slices.Contains(g.Scopes, s) {
				return nil, oauthErr(KindInvalid, OAuthInvalidScope, "the scope %q was not granted; the grant has %s", echo(s), strings.Join(g.Scopes, " "))
			}
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
		slices.Sort(scopes)
	}
	// The used token keeps what it was rotated into, for RefreshGrace.
	out := newIssued(scopes)
	successor, err := sealSuccessor(r.RefreshToken, t.ID, out)
	if err != nil {
		return nil, AsError(err)
	}
	raced := false
	err = h.store.Update(ctx, func(tx Tx) error {
		raced = false
		if err := tx.UseToken(ctx, t.ID, now, successor); err != nil {
			if errors.Is(err, ErrNoRows) { // another request used it first
				raced = true
				return nil
			}
			return err
		}
		if err := tx.ForgetSuccessors(ctx, g.ID, now.Add(-RefreshGrace)); err != nil {
			return err
		}
		return h.issue(ctx, tx, g, out, now)
	})
	if err != nil {
		return nil, AsError(err)
	}
	if raced {
		if t, _, _, err = h.store.TokenByHash(ctx, hash); err != nil {
			return nil, AsError(err)
		}
		return h.refreshAgain(ctx, g, t, r.RefreshToken, now)
	}
	return out, nil
}

// refreshAgain answers a refresh token sent again after its use. Within
// RefreshGrace of that use, while the tokens it gave are still good, it
// gives them again: a client refreshing with it in parallel (the
// TypeScript MCP SDK does, when several calls meet an expired token) gets
// the one pair, not a revoked grant. Otherwise it was copied: reuse.
func (h *Hub) refreshAgain(ctx context.Context, g *OAuthGrant, t *Token, refresh string, now time.Time) (*IssuedTokens, error) {
	if now.Sub(t.RevokedAt) < RefreshGrace && t.Successor != nil {
		if out, ok := openSuccessor(refresh, t.ID, t.Successor); ok {
			access, _, _, aerr := h.store.TokenByHash(ctx, HashToken(out.AccessToken))
			next, _, _, nerr := h.store.TokenByHash(ctx, HashToken(out.RefreshToken))
			if aerr == nil && nerr == nil && access.RevokedAt.IsZero() && next.RevokedAt.IsZero() && now.Before(access.ExpiresAt) {
				out.ExpiresIn, out.Scopes = access.ExpiresAt.Sub(now), access.Scopes
				return out, nil
			}
			for _, err := range []error{aerr, nerr} {
				if err != nil && !errors.Is(err, ErrNoRows) {
					return nil, AsError(err)
				}
			}
		}
	}
	return nil, h.refreshReused(ctx, g)
}

// refreshReused revokes every token of a grant whose used refresh token
// came back: it was copied, and nobody can tell which holder is the
// client (§10.6).
func (h *Hub) refreshReused(ctx context.Context, g *OAuthGrant) error {
	h.log.Warn("a used refresh token came back; revoking its grant", "grant", g.ID, "client", g.ClientID)
	if err := h.revokeGrant(ctx, g.ID); err != nil {
		return err
	}
	return errBadGrant("the refresh token was already used; every token of this authorization is now revoked, so authorize again")
}

func (h *Hub) revokeGrant(ctx context.Context, id string) error {
	now := h.now()
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.RevokeOAuthGrant(ctx, id, now) }); err != nil {
		return AsError(err)
	}
	return nil
}

// RevokeOAuthToken is a client revoking one of its tokens (RFC 7009): an
// access token stops working; a refresh token ends its whole grant. A
// token that is not known, or not the client's, is no error and changes
// nothing (RFC 7009 §2.2).
func (h *Hub) RevokeOAuthToken(ctx context.Context, clientID, token string) error {
	if clientID == "" {
		return oauthErr(KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if token == "" {
		return oauthErr(KindInvalid, OAuthInvalidRequest, "token is missing")
	}
	t, _, _, err := h.store.TokenByHash(ctx, HashToken(token))
	if errors.Is(err, ErrNoRows) || (err == nil && t.GrantID == "") {
		return nil
	}
	if err != nil {
		return AsError(err)
	}
	g, err := h.store.OAuthGrant(ctx, t.GrantID)
	if err != nil {
		return AsError(err)
	}
	if g.ClientID != clientID {
		return nil
	}
	if strings.HasPrefix(token, RefreshTokenPrefix) {
		return h.revokeGrant(ctx, g.ID)
	}
	if t.RevokedAt.IsZero() {
		if err := h.store.Update(ctx, func(tx Tx) error { return tx.RevokeToken(ctx, t.ID, h.now()) }); err != nil {
			return AsError(err)
		}
	}
	return nil
}
