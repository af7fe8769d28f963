package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
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
func (au *Authority) ExchangeToken(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	switch r.GrantType {
	case "authorization_code":
		return au.exchangeCode(ctx, r)
	case "refresh_token":
		return au.refresh(ctx, r)
	case "":
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "grant_type is missing")
	}
	return nil, oauthErr(hub.KindInvalid, OAuthUnsupportedGrant, "grant_type %q is not supported; use authorization_code or refresh_token", hub.Echo(r.GrantType))
}

var errBadGrant = func(msg string) error { return oauthErr(hub.KindInvalid, OAuthInvalidGrant, "%s", msg) }

func (au *Authority) exchangeCode(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	if r.ClientID == "" {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if r.Code == "" || r.CodeVerifier == "" {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "code and code_verifier are required")
	}
	if !strings.HasPrefix(r.Code, codePrefix) {
		return nil, errBadGrant("the authorization code is not known")
	}
	hash := hub.HashToken(r.Code)
	code, err := au.store.OAuthCodeByHash(ctx, hash)
	if errors.Is(err, hub.ErrNoRows) {
		return nil, errBadGrant("the authorization code is not known")
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	g, err := au.store.OAuthGrant(ctx, code.GrantID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	now := au.hub.Now()
	switch {
	case g.ClientID != r.ClientID:
		return nil, errBadGrant("the authorization code was issued to another client")
	case !code.UsedAt.IsZero():
		// A code used twice was likely stolen: what it gave is revoked too
		// (RFC 6749 §4.1.2).
		if err := au.revokeGrant(ctx, g.ID); err != nil {
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
	case r.Resource != "" && !hub.SameResource(r.Resource, g.Resource):
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidTarget, "the authorization was for the resource %s, not %q", g.Resource, hub.Echo(r.Resource))
	}
	var out *IssuedTokens
	err = au.store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.UseOAuthCode(ctx, hash, now); err != nil {
			if errors.Is(err, hub.ErrNoRows) {
				return errBadGrant("the authorization code was already used")
			}
			return err
		}
		out = newIssued(g.Scopes)
		return au.issue(ctx, tx, g, out, now)
	})
	if err != nil {
		return nil, hub.AsError(err)
	}
	return out, nil
}

// newIssued is a new access token and refresh token with these scopes.
func newIssued(scopes []string) *IssuedTokens {
	return &IssuedTokens{AccessToken: hub.NewTokenSecret(hub.AgentTokenPrefix), RefreshToken: hub.NewTokenSecret(hub.RefreshTokenPrefix),
		ExpiresIn: AccessTokenLifetime, Scopes: scopes}
}

// issue stores the new access token and refresh token of a grant.
func (au *Authority) issue(ctx context.Context, tx hub.Tx, g *hub.OAuthGrant, out *IssuedTokens, now time.Time) error {
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
	for _, t := range []*hub.Token{
		{Hash: hub.HashToken(out.AccessToken), Scopes: out.Scopes, ExpiresAt: now.Add(AccessTokenLifetime)},
		{Hash: hub.HashToken(out.RefreshToken), Scopes: g.Scopes, ExpiresAt: now.Add(RefreshTokenLifetime)},
	} {
		t.ID, t.UserID, t.AgentID, t.Name, t.CreatedAt, t.GrantID, t.Resource = hub.NewID(hub.IDToken, now), g.UserID, g.AgentID, c.Label(), now, g.ID, g.Resource
		if err := tx.InsertToken(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// errArchived refuses tokens for an archived agent: its credentials ended
// when it was archived (§1), which no client is to take for reuse.
func errArchived(a *hub.Agent) error {
	return errBadGrant("the agent " + a.Handle() + " is archived, which ended its tokens; its owner can bring it back on the dashboard, then authorize this client again")
}

func (au *Authority) refresh(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	if r.ClientID == "" {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if hub.CheckTokenFormat(r.RefreshToken, hub.RefreshTokenPrefix, "a refresh") != nil {
		return nil, errBadGrant("the refresh token is not known")
	}
	hash := hub.HashToken(r.RefreshToken)
	t, a, _, err := au.store.TokenByHash(ctx, hash)
	if errors.Is(err, hub.ErrNoRows) || (err == nil && t.GrantID == "") {
		return nil, errBadGrant("the refresh token is not known")
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	g, err := au.store.OAuthGrant(ctx, t.GrantID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	now := au.hub.Now()
	switch {
	case g.ClientID != r.ClientID:
		return nil, errBadGrant("the refresh token was issued to another client")
	case a != nil && a.Archived():
		// Archiving revoked the grant and its tokens: nobody reused one.
		return nil, errArchived(a)
	case !g.RevokedAt.IsZero():
		return nil, errBadGrant("the authorization was revoked; authorize again")
	case !t.RevokedAt.IsZero():
		return au.refreshAgain(ctx, g, t, r.RefreshToken, now)
	case !now.Before(t.ExpiresAt):
		return nil, errBadGrant("the refresh token expired; authorize again")
	case r.Resource != "" && !hub.SameResource(r.Resource, g.Resource):
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidTarget, "the authorization was for the resource %s, not %q", g.Resource, hub.Echo(r.Resource))
	}
	scopes := g.Scopes
	if r.Scope != "" {
		scopes = nil
		for _, s := range strings.Fields(r.Scope) {
			if !slices.Contains(g.Scopes, s) {
				return nil, oauthErr(hub.KindInvalid, OAuthInvalidScope, "the scope %q was not granted; the grant has %s", hub.Echo(s), strings.Join(g.Scopes, " "))
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
		return nil, hub.AsError(err)
	}
	raced := false
	err = au.store.Update(ctx, func(tx hub.Tx) error {
		raced = false
		if err := tx.UseToken(ctx, t.ID, now, successor); err != nil {
			if errors.Is(err, hub.ErrNoRows) { // another request used it first
				raced = true
				return nil
			}
			return err
		}
		if err := tx.ForgetSuccessors(ctx, g.ID, now.Add(-RefreshGrace)); err != nil {
			return err
		}
		return au.issue(ctx, tx, g, out, now)
	})
	if err != nil {
		return nil, hub.AsError(err)
	}
	if raced {
		if t, _, _, err = au.store.TokenByHash(ctx, hash); err != nil {
			return nil, hub.AsError(err)
		}
		return au.refreshAgain(ctx, g, t, r.RefreshToken, now)
	}
	return out, nil
}

// refreshAgain answers a refresh token sent again after its use. Within
// RefreshGrace of that use, while the tokens it gave are still good, it
// gives them again: a client refreshing with it in parallel (the
// TypeScript MCP SDK does, when several calls meet an expired token) gets
// the one pair, not a revoked grant. Otherwise it was copied: reuse.
func (au *Authority) refreshAgain(ctx context.Context, g *hub.OAuthGrant, t *hub.Token, refresh string, now time.Time) (*IssuedTokens, error) {
	if now.Sub(t.RevokedAt) < RefreshGrace && t.Successor != nil {
		if out, ok := openSuccessor(refresh, t.ID, t.Successor); ok {
			access, _, _, aerr := au.store.TokenByHash(ctx, hub.HashToken(out.AccessToken))
			next, _, _, nerr := au.store.TokenByHash(ctx, hub.HashToken(out.RefreshToken))
			if aerr == nil && nerr == nil && access.RevokedAt.IsZero() && next.RevokedAt.IsZero() && now.Before(access.ExpiresAt) {
				out.ExpiresIn, out.Scopes = access.ExpiresAt.Sub(now), access.Scopes
				return out, nil
			}
			for _, err := range []error{aerr, nerr} {
				if err != nil && !errors.Is(err, hub.ErrNoRows) {
					return nil, hub.AsError(err)
				}
			}
		}
	}
	return nil, au.refreshReused(ctx, g)
}

// refreshReused revokes every token of a grant whose used refresh token
// came back: it was copied, and nobody can tell which holder is the
// client (§10.6).
func (au *Authority) refreshReused(ctx context.Context, g *hub.OAuthGrant) error {
	au.log.Warn("a used refresh token came back; revoking its grant", "grant", g.ID, "client", g.ClientID)
	if err := au.revokeGrant(ctx, g.ID); err != nil {
		return err
	}
	return errBadGrant("the refresh token was already used; every token of this authorization is now revoked, so authorize again")
}

func (au *Authority) revokeGrant(ctx context.Context, id string) error {
	now := au.hub.Now()
	if err := au.store.Update(ctx, func(tx hub.Tx) error { return tx.RevokeOAuthGrant(ctx, id, now) }); err != nil {
		return hub.AsError(err)
	}
	return nil
}

// RevokeOAuthToken is a client revoking one of its tokens (RFC 7009): an
// access token stops working; a refresh token ends its whole grant. A
// token that is not known, or not the client's, is no error and changes
// nothing (RFC 7009 §2.2).
func (au *Authority) RevokeOAuthToken(ctx context.Context, clientID, token string) error {
	if clientID == "" {
		return oauthErr(hub.KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if token == "" {
		return oauthErr(hub.KindInvalid, OAuthInvalidRequest, "token is missing")
	}
	t, _, _, err := au.store.TokenByHash(ctx, hub.HashToken(token))
	if errors.Is(err, hub.ErrNoRows) || (err == nil && t.GrantID == "") {
		return nil
	}
	if err != nil {
		return hub.AsError(err)
	}
	g, err := au.store.OAuthGrant(ctx, t.GrantID)
	if err != nil {
		return hub.AsError(err)
	}
	if g.ClientID != clientID {
		return nil
	}
	if strings.HasPrefix(token, hub.RefreshTokenPrefix) {
		return au.revokeGrant(ctx, g.ID)
	}
	if t.RevokedAt.IsZero() {
		if err := au.store.Update(ctx, func(tx hub.Tx) error { return tx.RevokeToken(ctx, t.ID, au.hub.Now()) }); err != nil {
			return hub.AsError(err)
		}
	}
	return nil
}
