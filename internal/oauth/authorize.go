package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// The authorization request and the person's consent (§10.6): PKCE S256,
// an exact redirect URI, the resource bound in, iss and state on every
// redirect.

// AuthRequest is an authorization request (RFC 6749 §4.1.1 with PKCE,
// RFC 7636, and a resource indicator, RFC 8707), and what the face knows
// of this server: its issuer and the resources it serves.
type AuthRequest struct {
	ResponseType        string
	ClientID            string
	RedirectURI         string
	Scope               string // space-separated; "" asks for every scope
	State               string
	CodeChallenge       string
	CodeChallengeMethod string
	Resource            string

	Issuer    string   // this server's issuer, sent back as iss (RFC 9207)
	Resources []string // the resources a token may be for; the first is the default
	From      string   // the requester's address, for the throttle of client document fetches
}

// Authorization is a checked authorization request: the client, the
// scopes it asks for (and this server knows) and the resource its tokens
// will be for.
type Authorization struct {
	Request  AuthRequest
	Client   *hub.OAuthClient
	Scopes   []string
	Resource string
	Agents   []*hub.Agent // the person's agents to pick from (ConsentFor)
}

// ConsentFor is a checked authorization request with the person's agents
// to pick from, for the consent page; refused as CheckAuthorization
// refuses.
func (au *Authority) ConsentFor(ctx context.Context, u *hub.User, r AuthRequest) (*Authorization, error) {
	a, err := au.CheckAuthorization(ctx, r)
	if err != nil {
		return a, err
	}
	if a.Agents, err = au.store.Agents(ctx, u.ID, false); err != nil {
		return nil, hub.AsError(err)
	}
	return a, nil
}

// Redirect is the redirect URI with the response's parameters added, and
// always state (when the client sent one) and iss (RFC 9207).
func (a *Authorization) Redirect(params map[string]string) string {
	u, _ := url.Parse(a.Request.RedirectURI)
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	if a.Request.State != "" {
		q.Set("state", a.Request.State)
	}
	q.Set("iss", a.Request.Issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// ErrorRedirect is the redirect that tells the client why its request was
// refused (RFC 6749 §4.1.2.1).
func (a *Authorization) ErrorRedirect(err error) string {
	e := hub.AsError(err)
	code := e.Code
	if code == "" || e.Kind == hub.KindInternal {
		code = "server_error"
	}
	params := map[string]string{"error": code}
	if e.Kind != hub.KindInternal {
		params["error_description"] = e.Text(nil, nil)
	}
	return a.Redirect(params)
}

// CheckAuthorization checks an authorization request (§10.6). When the
// client or its redirect URI is wrong it returns no Authorization: the
// person must be told, never the redirect URI. Any other refusal comes
// with the Authorization, whose ErrorRedirect tells the client.
func (au *Authority) CheckAuthorization(ctx context.Context, r AuthRequest) (*Authorization, error) {
	c, err := au.client(ctx, r.ClientID, r.From)
	if err != nil {
		return nil, err
	}
	if r.RedirectURI == "" {
		if len(c.RedirectURIs) != 1 {
			return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "redirect_uri is missing, and the client %s has more than one", c.Label())
		}
		r.RedirectURI = c.RedirectURIs[0]
	}
	if err := checkRedirectURI(r.RedirectURI); err != nil {
		// What registration refuses is refused here too, whatever port a
		// loopback one names (RFC 8252 §7.3 lets only the port vary).
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "%s", hub.AsError(err).Msg)
	}
	if !redirectMatches(c.RedirectURIs, r.RedirectURI) {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "the redirect URI %q is not one the client %s registered", hub.Echo(r.RedirectURI), c.Label())
	}
	a := &Authorization{Request: r, Client: c}
	switch {
	case r.ResponseType != "code":
		return a, oauthErr(hub.KindInvalid, OAuthUnsupportedResponse, "response_type must be code")
	case r.CodeChallenge == "":
		return a, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "code_challenge is missing: this server requires PKCE with S256")
	case r.CodeChallengeMethod != "S256":
		return a, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "code_challenge_method must be S256")
	case !validChallenge(r.CodeChallenge):
		return a, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "code_challenge is not an S256 challenge (43 characters of base64url)")
	}
	if a.Resource, err = pickResource(r.Resource, r.Resources); err != nil {
		return a, err
	}
	if a.Scopes, err = askedScopes(r.Scope); err != nil {
		return a, err
	}
	return a, nil
}

// pickResource is the resource a request's tokens will be for: the one it
// names, if this server serves it (the trailing slash aside), or the
// default.
func pickResource(asked string, served []string) (string, error) {
	if asked == "" {
		if len(served) == 0 {
			return "", oauthErr(hub.KindInvalid, OAuthInvalidTarget, "this server names no resource")
		}
		return served[0], nil
	}
	for _, s := range served {
		if hub.SameResource(s, asked) {
			return asked, nil
		}
	}
	return "", oauthErr(hub.KindInvalid, OAuthInvalidTarget, "the resource %q is not served here; the resources are %s", hub.Echo(asked), strings.Join(served, ", "))
}

// askedScopes are the known scopes of a request's scope parameter; every
// scope when it names none. Scopes this server does not know are ignored
// (RFC 6749 §3.3 lets a server grant less), unless nothing is left.
func askedScopes(scope string) ([]string, error) {
	fields := strings.Fields(scope)
	if len(fields) == 0 {
		return slices.Clone(hub.AllScopes), nil
	}
	var out []string
	for _, f := range fields {
		if slices.Contains(hub.AllScopes, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidScope, "none of the scopes asked for is known here; the scopes are %s", strings.Join(hub.AllScopes, " "))
	}
	slices.Sort(out)
	return out, nil
}

func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil
}

// validVerifier: 43–128 of the unreserved characters (RFC 7636 §4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	return strings.Trim(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") == ""
}

// s256 is the S256 code challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Consent is what a person decided on the consent page: deny, or let the
// client act as one of their agents (or one made now) with some of the
// scopes it asked for.
type Consent struct {
	Deny           bool
	Agent          string // the slug of one of their agents
	NewAgent       string // or: the slug of an agent to create
	NewDescription string
	Scopes         []string // at least one, of those asked for
}

// Authorize is the person's answer to a checked authorization request: it
// returns where the browser goes next — the client's redirect URI with a
// code (or with error=access_denied when denied, or the request's fault),
// state and iss. A request whose client or redirect URI is wrong, or a
// consent that is not valid (no scope, not their agent), is an error.
func (au *Authority) Authorize(ctx context.Context, u *hub.User, r AuthRequest, c Consent) (string, error) {
	a, err := au.CheckAuthorization(ctx, r)
	if err != nil {
		if a != nil {
			return a.ErrorRedirect(err), nil
		}
		return "", err
	}
	if c.Deny {
		return a.Redirect(map[string]string{"error": OAuthAccessDenied, "error_description": u.Handle + " did not allow it"}), nil
	}
	if len(c.Scopes) == 0 {
		return "", invalid("", "give the client at least one scope")
	}
	for _, s := range c.Scopes {
		if !slices.Contains(a.Scopes, s) {
			return "", invalid("", "the client did not ask for the scope %q; it asked for %s", hub.Echo(s), strings.Join(a.Scopes, " "))
		}
	}
	scopes := slices.Clone(c.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	var agent *hub.Agent
	if c.NewAgent != "" {
		if agent, err = au.hub.CreateOwnAgent(ctx, u, strings.TrimSpace(c.NewAgent), c.NewDescription, ""); err != nil {
			return "", err
		}
	} else {
		if agent, err = au.hub.OwnAgent(ctx, u, c.Agent); err != nil {
			return "", err
		}
		if agent.Archived() {
			return "", invalid("", "%s is archived; bring it back first, or pick another agent", agent.Handle())
		}
	}
	now := au.hub.Now()
	g := &hub.OAuthGrant{ID: hub.NewID(hub.IDOAuthGrant, now), ClientID: a.Client.ID, UserID: u.ID, AgentID: agent.ID, Scopes: scopes,
		RedirectURI: a.Request.RedirectURI, Resource: a.Resource, CreatedAt: now}
	code := hub.NewTokenSecret(codePrefix)
	oc := &hub.OAuthCode{Hash: hub.HashToken(code), GrantID: g.ID, Challenge: a.Request.CodeChallenge, CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}
	if err := au.store.Update(ctx, func(tx hub.Tx) error {
		if err := tx.InsertOAuthGrant(ctx, g); err != nil {
			return err
		}
		return tx.InsertOAuthCode(ctx, oc)
	}); err != nil {
		return "", hub.AsError(err)
	}
	return a.Redirect(map[string]string{"code": code}), nil
}
