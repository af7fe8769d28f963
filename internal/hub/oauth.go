package hub

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
)

// OAuth 2.1 (§2, §10.6): clients register (RFC 7591) or are known by a
// client ID metadata document; a person consents on the dashboard to let a
// client act as one of their agents with some scopes; the client trades the
// authorization code (PKCE S256 only) for an access token of an hour and a
// refresh token that rotates on every use. Both tokens are rows of the
// tokens table, so one verifier serves static and OAuth tokens and a
// revocation is immediate. Every rule of it is here; the oauth face and the
// consent page decode, call one of these, and render.

// Lifetimes and limits of OAuth (§10.6).
const (
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 30 * 24 * time.Hour
	// CodeLifetime is how long an authorization code may wait for its
	// exchange.
	CodeLifetime = 5 * time.Minute
	// ClientDocumentMaxBytes bounds a client ID metadata document, and
	// ClientDocumentTTL is how long a fetched one is kept before it is
	// fetched again.
	ClientDocumentMaxBytes = 16 << 10
	ClientDocumentTTL      = time.Hour
	// MaxRedirectURIs bounds a client's redirect URIs.
	MaxRedirectURIs = 10
)

// Prefixes of OAuth secrets. Access tokens are agent tokens (plv_…), so
// the MCP face's one verifier takes them; refresh tokens and codes have
// their own prefixes, so neither is ever taken as a bearer token.
const (
	RefreshTokenPrefix = "plr_"
	codePrefix         = "plc_"
	IDOAuthClient      = "cli"
	IDOAuthGrant       = "oag"
)

// OAuth error codes (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2; RFC 8707),
// the Code of the Errors these functions return.
const (
	OAuthInvalidRequest      = "invalid_request"
	OAuthInvalidClient       = "invalid_client"
	OAuthInvalidGrant        = "invalid_grant"
	OAuthUnauthorizedClient  = "unauthorized_client"
	OAuthUnsupportedGrant    = "unsupported_grant_type"
	OAuthUnsupportedResponse = "unsupported_response_type"
	OAuthInvalidScope        = "invalid_scope"
	OAuthInvalidTarget       = "invalid_target"
	OAuthAccessDenied        = "access_denied"
	OAuthInvalidRedirectURI  = "invalid_redirect_uri"
	OAuthInvalidMetadata     = "invalid_client_metadata"
)

func oauthErr(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// OAuthClient is an OAuth client: registered here (ID cli_…), or known by
// its metadata document (ID the document's https URL; Document true).
type OAuthClient struct {
	ID              string
	Name            string
	RedirectURIs    []string
	ApplicationType string // "web" or "native"
	Document        bool
	CreatedAt       time.Time
	FetchedAt       time.Time // when its document was last fetched
}

// Label is what a person is shown for the client: its name, or its id.
func (c *OAuthClient) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.ID
}

// OAuthGrant is a person's consent that a client acts as one of their
// agents with these scopes, for one resource; every token issued under it
// carries its id, and revoking it ends them all.
type OAuthGrant struct {
	ID          string // oag_…
	ClientID    string
	UserID      string
	AgentID     string
	Scopes      []string
	RedirectURI string
	Resource    string
	CreatedAt   time.Time
	RevokedAt   time.Time

	// Filled when grants are listed: the client's name, and when a token
	// of the grant was last used.
	ClientName string
	LastUsedAt time.Time
}

// OAuthCode is an authorization code, stored by its hash.
type OAuthCode struct {
	Hash      []byte
	GrantID   string
	Challenge string // the PKCE S256 code_challenge
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
}

// DocumentFetcher fetches a client ID metadata document: an https GET of
// url that connects to no address allow refuses, follows no redirect,
// reads at most max bytes and gives up after a short timeout. The hub
// decides what may be fetched; the fetcher only obeys.
type DocumentFetcher interface {
	Fetch(ctx context.Context, url string, allow func(netip.Addr) bool, max int64) ([]byte, error)
}

// AllowFetch reports whether a client document at host may be fetched from
// the address ip: any public address, and a private, loopback, link-local
// or otherwise special one only for a host the admin let through
// (Options.PrivateHosts, `palaver serve --allow-private-host`), §10.6.
func (h *Hub) AllowFetch(host string, ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return false
	}
	public := ip.IsGlobalUnicast() && !ip.IsPrivate() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() &&
		!sharedAddressSpace.Contains(ip) && !ip.Is4In6()
	if public {
		return true
	}
	return slices.Contains(h.privateHosts, strings.ToLower(host))
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, private in
// all but name.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// checkRedirectURI says what is wrong with a redirect URI a client names,
// or nil: an absolute https URL, or http on a loopback host (any port),
// with no fragment and no user info (§10.6).
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	bad := func(why string) error {
		return oauthErr(KindInvalid, OAuthInvalidRedirectURI, "the redirect URI %q %s", echo(s), why)
	}
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return bad("is not an absolute URL")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return bad("has a fragment")
	case u.User != nil:
		return bad("has user info")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return bad("must be https, or http on a loopback address (localhost, 127.0.0.1, [::1])")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// redirectMatches reports whether the redirect URI a request names is one
// the client registered: the same string, except that a loopback one may
// name any port (RFC 8252 §7.3: native apps listen on a port of the
// moment).
func redirectMatches(registered []string, asked string) bool {
	if slices.Contains(registered, asked) {
		return true
	}
	a, err := url.Parse(asked)
	if err != nil || a.Scheme != "http" || !isLoopback(a.Hostname()) {
		return false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
			continue
		}
		if u.Hostname() == a.Hostname() && u.EscapedPath() == a.EscapedPath() && u.RawQuery == a.RawQuery {
			return true
		}
	}
	return false
}

// SameResource reports whether two resource URIs name the same thing,
// a trailing slash aside (§10.6; clients round-trip either form).
func SameResource(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// ClientSpec is a dynamic client registration (RFC 7591).
type ClientSpec struct {
	Name                    string
	RedirectURIs            []string
	ApplicationType         string // "web" (the default) or "native"
	TokenEndpointAuthMethod string // "" or "none": every client is public
	GrantTypes              []string
	ResponseTypes           []string
	From                    string // the registering client's address, for the throttle
}

// checkClient validates what a client says of itself, by registration or
// in its document, and fills the defaults.
func checkClient(s *ClientSpec) error {
	name, err := checkText("client_name", s.Name, 0, MaxTitle)
	if err != nil {
		return oauthErr(KindInvalid, OAuthInvalidMetadata, "%s", AsError(err).Msg)
	}
	s.Name = name
	if len(s.RedirectURIs) == 0 || len(s.RedirectURIs) > MaxRedirectURIs {
		return oauthErr(KindInvalid, OAuthInvalidRedirectURI, "a client names 1 to %d redirect_uris", MaxRedirectURIs)
	}
	for _, r := range s.RedirectURIs {
		if err := checkRedirectURI(r); err != nil {
			return err
		}
	}
	switch s.ApplicationType {
	case "":
		s.ApplicationType = "web"
	case "web", "native":
	default:
		return oauthErr(KindInvalid, OAuthInvalidMetadata, "application_type is web or native (got %q)", echo(s.ApplicationType))
	}
	switch s.TokenEndpointAuthMethod {
	case "", "none", "client_secret_post", "client_secret_basic":
		// Every client is public: it proves itself by PKCE, and gets no secret.
	default:
		return oauthErr(KindInvalid, OAuthInvalidMetadata, "token_endpoint_auth_method %q is not supported; this server takes public clients (none)", echo(s.TokenEndpointAuthMethod))
	}
	for _, g := range s.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return oauthErr(KindInvalid, OAuthInvalidMetadata, "grant type %q is not supported; the grant types are authorization_code and refresh_token", echo(g))
		}
	}
	for _, rt := range s.ResponseTypes {
		if rt != "code" {
			return oauthErr(KindInvalid, OAuthInvalidMetadata, "response type %q is not supported; the response type is code", echo(rt))
		}
	}
	return nil
}

// RegisterClient registers a public client (RFC 7591) and returns it with
// the id it is to send as client_id.
func (h *Hub) RegisterClient(ctx context.Context, s ClientSpec) (*OAuthClient, error) {
	if err := checkClient(&s); err != nil {
		return nil, err
	}
	now := h.now()
	// Registration needs no account, so each address may register only
	// so many clients (§15); a refused or failed one costs nothing.
	refund, wait := h.signins.take(now, "register:"+addressKey(s.From), registrations)
	if refund == nil {
		return nil, throttled("clients registered from here", wait)
	}
	c := &OAuthClient{ID: NewID(IDOAuthClient, now), Name: s.Name, RedirectURIs: s.RedirectURIs, ApplicationType: s.ApplicationType, CreatedAt: now}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.PutOAuthClient(ctx, c) }); err != nil {
		refund()
		return nil, AsError(err)
	}
	return c, nil
}

// isDocumentID reports whether a client_id is the URL of a client ID
// metadata document rather than an id made here.
func isDocumentID(id string) bool {
	return strings.HasPrefix(strings.ToLower(id), "https://") || strings.HasPrefix(strings.ToLower(id), "http://")
}

// client is the client with this id: a registered one, or the one its
// metadata document describes, fetched (or taken from the copy kept for
// ClientDocumentTTL). Unknown, unfetchable or invalid: invalid_client.
func (h *Hub) client(ctx context.Context, id string) (*OAuthClient, error) {
	if id == "" {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if !isDocumentID(id) {
		c, err := h.store.OAuthClient(ctx, id)
		if errors.Is(err, ErrNoRows) || (err == nil && c.Document) {
			return nil, oauthErr(KindInvalid, OAuthInvalidClient, "no client has the id %q; register it first (the registration endpoint is in the server's metadata)", echo(id))
		}
		if err != nil {
			return nil, AsError(err)
		}
		return c, nil
	}
	now := h.now()
	c, err := h.store.OAuthClient(ctx, id)
	switch {
	case err == nil && c.Document && now.Sub(c.FetchedAt) < ClientDocumentTTL:
		return c, nil
	case err != nil && !errors.Is(err, ErrNoRows):
		return nil, AsError(err)
	}
	fetched, err := h.fetchClient(ctx, id)
	if err != nil {
		return nil, err
	}
	fetched.CreatedAt, fetched.FetchedAt = now, now
	if c != nil {
		fetched.CreatedAt = c.CreatedAt
	}
	if err := h.store.Update(ctx, func(tx Tx) error { return tx.PutOAuthClient(ctx, fetched) }); err != nil {
		return nil, AsError(err)
	}
	return fetched, nil
}

// clientDocument is what a client ID metadata document says.
type clientDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ApplicationType         string   `json:"application_type"`
	ClientSecret            string   `json:"client_secret"`
}

// fetchClient fetches and checks a client ID metadata document: its URL is
// https with a path, its host is reached only at an address AllowFetch
// lets through (checked again when connecting, so a name that resolves to
// a private address is never fetched), and it names itself by that URL.
func (h *Hub) fetchClient(ctx context.Context, id string) (*OAuthClient, error) {
	bad := func(format string, args ...any) error {
		return oauthErr(KindInvalid, OAuthInvalidClient, "the client id %q: "+format, append([]any{echo(id)}, args...)...)
	}
	u, err := url.Parse(id)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "":
		return nil, bad("a client id that is a URL must be https")
	case u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || slices.Contains(strings.Split(u.Path, "/"), ".") || slices.Contains(strings.Split(u.Path, "/"), ".."):
		return nil, bad("a client ID metadata document is at an https URL with a path, and no fragment, user info or dot segments")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil && !h.AllowFetch(host, ip) {
		return nil, bad("its host is a private address, which this server does not fetch from")
	}
	if h.fetcher == nil {
		return nil, bad("this server fetches no client documents")
	}
	body, err := h.fetcher.Fetch(ctx, id, func(ip netip.Addr) bool { return h.AllowFetch(host, ip) }, ClientDocumentMaxBytes)
	if err != nil {
		h.log.Info("fetching a client ID metadata document", "client_id", id, "err", err)
		return nil, bad("its metadata document could not be fetched: %v", err)
	}
	var d clientDocument
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, bad("its metadata document is not a JSON object")
	}
	if d.ClientID != id {
		return nil, bad("its metadata document names another client_id (%q)", echo(d.ClientID))
	}
	if d.ClientSecret != "" {
		return nil, bad("its metadata document holds a client_secret; a document describes a public client")
	}
	s := ClientSpec{Name: d.ClientName, RedirectURIs: d.RedirectURIs, ApplicationType: d.ApplicationType,
		TokenEndpointAuthMethod: d.TokenEndpointAuthMethod, GrantTypes: d.GrantTypes, ResponseTypes: d.ResponseTypes}
	if s.TokenEndpointAuthMethod != "" && s.TokenEndpointAuthMethod != "none" {
		return nil, bad("its token_endpoint_auth_method is %q; a document describes a public client (none)", echo(s.TokenEndpointAuthMethod))
	}
	if err := checkClient(&s); err != nil {
		return nil, bad("%s", AsError(err).Msg)
	}
	return &OAuthClient{ID: id, Name: s.Name, RedirectURIs: s.RedirectURIs, ApplicationType: s.ApplicationType, Document: true}, nil
}

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
	Resources []string // the MCP endpoints a token may be for; the first is the default
}

// Authorization is a checked authorization request: the client, the
// scopes it asks for (and this server knows) and the resource its tokens
// will be for.
type Authorization struct {
	Request  AuthRequest
	Client   *OAuthClient
	Scopes   []string
	Resource string
	Agents   []*Agent // the person's agents to pick from (ConsentFor)
}

// ConsentFor is a checked authorization request with the person's agents
// to pick from, for the consent page; refused as CheckAuthorization
// refuses.
func (h *Hub) ConsentFor(ctx context.Context, u *User, r AuthRequest) (*Authorization, error) {
	a, err := h.CheckAuthorization(ctx, r)
	if err != nil {
		return a, err
	}
	if a.Agents, err = h.store.Agents(ctx, u.ID, false); err != nil {
		return nil, AsError(err)
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
	e := AsError(err)
	code := e.Code
	if code == "" || e.Kind == KindInternal {
		code = "server_error"
	}
	params := map[string]string{"error": code}
	if e.Kind != KindInternal {
		params["error_description"] = e.Msg
	}
	return a.Redirect(params)
}

// CheckAuthorization checks an authorization request (§10.6). When the
// client or its redirect URI is wrong it returns no Authorization: the
// person must be told, never the redirect URI. Any other refusal comes
// with the Authorization, whose ErrorRedirect tells the client.
func (h *Hub) CheckAuthorization(ctx context.Context, r AuthRequest) (*Authorization, error) {
	c, err := h.client(ctx, r.ClientID)
	if err != nil {
		return nil, err
	}
	if r.RedirectURI == "" {
		if len(c.RedirectURIs) != 1 {
			return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "redirect_uri is missing, and the client %s has more than one", c.Label())
		}
		r.RedirectURI = c.RedirectURIs[0]
	}
	if !redirectMatches(c.RedirectURIs, r.RedirectURI) {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "the redirect URI %q is not one the client %s registered", echo(r.RedirectURI), c.Label())
	}
	a := &Authorization{Request: r, Client: c}
	switch {
	case r.ResponseType != "code":
		return a, oauthErr(KindInvalid, OAuthUnsupportedResponse, "response_type must be code")
	case r.CodeChallenge == "":
		return a, oauthErr(KindInvalid, OAuthInvalidRequest, "code_challenge is missing: this server requires PKCE with S256")
	case r.CodeChallengeMethod != "S256":
		return a, oauthErr(KindInvalid, OAuthInvalidRequest, "code_challenge_method must be S256")
	case !validChallenge(r.CodeChallenge):
		return a, oauthErr(KindInvalid, OAuthInvalidRequest, "code_challenge is not an S256 challenge (43 characters of base64url)")
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
			return "", oauthErr(KindInvalid, OAuthInvalidTarget, "this server names no resource")
		}
		return served[0], nil
	}
	for _, s := range served {
		if SameResource(s, asked) {
			return asked, nil
		}
	}
	return "", oauthErr(KindInvalid, OAuthInvalidTarget, "the resource %q is not served here; the resources are %s", echo(asked), strings.Join(served, ", "))
}

// askedScopes are the known scopes of a request's scope parameter; every
// scope when it names none. Scopes this server does not know are ignored
// (RFC 6749 §3.3 lets a server grant less), unless nothing is left.
func askedScopes(scope string) ([]string, error) {
	fields := strings.Fields(scope)
	if len(fields) == 0 {
		return slices.Clone(AllScopes), nil
	}
	var out []string
	for _, f := range fields {
		if slices.Contains(AllScopes, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, oauthErr(KindInvalid, OAuthInvalidScope, "none of the scopes asked for is known here; the scopes are %s", strings.Join(AllScopes, " "))
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
func (h *Hub) Authorize(ctx context.Context, u *User, r AuthRequest, c Consent) (string, error) {
	a, err := h.CheckAuthorization(ctx, r)
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
			return "", invalid("", "the client did not ask for the scope %q; it asked for %s", echo(s), strings.Join(a.Scopes, " "))
		}
	}
	scopes := slices.Clone(c.Scopes)
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	var agent *Agent
	if c.NewAgent != "" {
		if agent, err = h.CreateOwnAgent(ctx, u, strings.TrimSpace(c.NewAgent), c.NewDescription, ""); err != nil {
			return "", err
		}
	} else {
		if agent, err = h.OwnAgent(ctx, u, c.Agent); err != nil {
			return "", err
		}
		if agent.Archived() {
			return "", invalid("", "%s is archived; bring it back first, or pick another agent", agent.Handle())
		}
	}
	now := h.now()
	g := &OAuthGrant{ID: NewID(IDOAuthGrant, now), ClientID: a.Client.ID, UserID: u.ID, AgentID: agent.ID, Scopes: scopes,
		RedirectURI: a.Request.RedirectURI, Resource: a.Resource, CreatedAt: now}
	code := newTokenSecret(codePrefix)
	oc := &OAuthCode{Hash: HashToken(code), GrantID: g.ID, Challenge: a.Request.CodeChallenge, CreatedAt: now, ExpiresAt: now.Add(CodeLifetime)}
	if err := h.store.Update(ctx, func(tx Tx) error {
		if err := tx.InsertOAuthGrant(ctx, g); err != nil {
			return err
		}
		return tx.InsertOAuthCode(ctx, oc)
	}); err != nil {
		return "", AsError(err)
	}
	return a.Redirect(map[string]string{"code": code}), nil
}

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
// which rotates — the one sent stops working, and sending it again later
// revokes every token of its grant (§10.6). Refusals carry RFC 6749 codes.
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
		var err error
		out, err = h.issue(ctx, tx, g, g.Scopes, now)
		return err
	})
	if err != nil {
		return nil, AsError(err)
	}
	return out, nil
}

// issue stores a new access token and refresh token of a grant.
func (h *Hub) issue(ctx context.Context, tx Tx, g *OAuthGrant, scopes []string, now time.Time) (*IssuedTokens, error) {
	a, err := tx.AgentByID(ctx, g.AgentID)
	if err != nil {
		return nil, err
	}
	if a.Archived() {
		return nil, errBadGrant("the agent " + a.Handle() + " is archived")
	}
	c, err := tx.OAuthClient(ctx, g.ClientID)
	if err != nil {
		return nil, err
	}
	out := &IssuedTokens{AccessToken: newTokenSecret(AgentTokenPrefix), RefreshToken: newTokenSecret(RefreshTokenPrefix),
		ExpiresIn: AccessTokenLifetime, Scopes: scopes}
	for _, t := range []*Token{
		{Hash: HashToken(out.AccessToken), Scopes: scopes, ExpiresAt: now.Add(AccessTokenLifetime)},
		{Hash: HashToken(out.RefreshToken), Scopes: g.Scopes, ExpiresAt: now.Add(RefreshTokenLifetime)},
	} {
		t.ID, t.UserID, t.AgentID, t.Name, t.CreatedAt, t.GrantID, t.Resource = NewID(IDToken, now), g.UserID, g.AgentID, c.Label(), now, g.ID, g.Resource
		if err := tx.InsertToken(ctx, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (h *Hub) refresh(ctx context.Context, r TokenRequest) (*IssuedTokens, error) {
	if r.ClientID == "" {
		return nil, oauthErr(KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if checkTokenFormat(r.RefreshToken, RefreshTokenPrefix, "a refresh") != nil {
		return nil, errBadGrant("the refresh token is not known")
	}
	t, _, _, err := h.store.TokenByHash(ctx, HashToken(r.RefreshToken))
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
	case !g.RevokedAt.IsZero():
		return nil, errBadGrant("the authorization was revoked; authorize again")
	case !t.RevokedAt.IsZero():
		return nil, h.refreshReused(ctx, g)
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
	var out *IssuedTokens
	reused := false
	err = h.store.Update(ctx, func(tx Tx) error {
		reused = false
		if err := tx.UseToken(ctx, t.ID, now); err != nil {
			if errors.Is(err, ErrNoRows) { // another request used it first
				reused = true
				return nil
			}
			return err
		}
		var err error
		out, err = h.issue(ctx, tx, g, scopes, now)
		return err
	})
	if err != nil {
		return nil, AsError(err)
	}
	if reused {
		return nil, h.refreshReused(ctx, g)
	}
	return out, nil
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

// OAuthClientView is one client acting as an agent, for the agent's page:
// its name, the redirect URI and scopes it was last given, and when it
// last used a token.
type OAuthClientView struct {
	ClientID    string
	Name        string
	RedirectURI string
	Scopes      []string
	CreatedAt   time.Time
	LastUsedAt  time.Time
}

// OAuthClients lists the clients that act as the person's agent under a
// grant not revoked, the most recently authorized first.
func (h *Hub) OAuthClients(ctx context.Context, u *User, slug string) ([]OAuthClientView, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	return h.agentClients(ctx, a)
}

func (h *Hub) agentClients(ctx context.Context, a *Agent) ([]OAuthClientView, error) {
	gs, err := h.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var out []OAuthClientView
	at := map[string]int{}
	for _, g := range gs { // newest first
		i, ok := at[g.ClientID]
		if !ok {
			at[g.ClientID] = len(out)
			out = append(out, OAuthClientView{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes, CreatedAt: g.CreatedAt, LastUsedAt: g.LastUsedAt})
			continue
		}
		if g.LastUsedAt.After(out[i].LastUsedAt) {
			out[i].LastUsedAt = g.LastUsedAt
		}
	}
	return out, nil
}

// RevokeOAuthClient ends every grant of a client for the person's agent:
// its tokens stop working at once (its next request gets 401).
func (h *Hub) RevokeOAuthClient(ctx context.Context, u *User, slug, clientID string) (*OAuthClientView, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	gs, err := h.store.OAuthGrants(ctx, a.ID)
	if err != nil {
		return nil, AsError(err)
	}
	var view *OAuthClientView
	now := h.now()
	err = h.store.Update(ctx, func(tx Tx) error {
		for _, g := range gs {
			if g.ClientID != clientID {
				continue
			}
			if view == nil {
				view = &OAuthClientView{ClientID: g.ClientID, Name: cmp.Or(g.ClientName, g.ClientID), RedirectURI: g.RedirectURI, Scopes: g.Scopes}
			}
			if err := tx.RevokeOAuthGrant(ctx, g.ID, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, AsError(err)
	}
	if view == nil {
		return nil, notFound("no client %q acts as %s", echo(clientID), a.Handle())
	}
	return view, nil
}
