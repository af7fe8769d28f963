package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/throttle"

	"github.com/palaverhq/palaver/internal/egress"
)

// OAuth clients (§10.6): registered ones (RFC 7591) and those known by a
// client ID metadata document, fetched only where the hub allows.

// checkRedirectURI says what is wrong with a redirect URI a client names,
// or nil: an absolute https URL, or http on a loopback host (any port),
// with no fragment and no user info (§10.6).
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	bad := func(why string) error {
		return oauthErr(hub.KindInvalid, OAuthInvalidRedirectURI, "the redirect URI %q %s", hub.Echo(s), why)
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
	name, err := hub.CheckText("client_name", s.Name, 0, hub.MaxTitle)
	if err != nil {
		return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "%s", hub.AsError(err).Msg)
	}
	if r, ok := hiddenRune(name); ok {
		// The consent page shows the name to the person deciding: it must
		// read as what it is, not as another client's.
		return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "client_name holds U+%04X, an invisible or text-direction character, which could make it show as another name; give a name of visible characters only", r)
	}
	s.Name = name
	if len(s.RedirectURIs) == 0 || len(s.RedirectURIs) > MaxRedirectURIs {
		return oauthErr(hub.KindInvalid, OAuthInvalidRedirectURI, "a client names 1 to %d redirect_uris", MaxRedirectURIs)
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
		return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "application_type is web or native (got %q)", hub.Echo(s.ApplicationType))
	}
	switch s.TokenEndpointAuthMethod {
	case "", "none", "client_secret_post", "client_secret_basic":
		// Every client is public: it proves itself by PKCE, and gets no secret.
	default:
		return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "token_endpoint_auth_method %q is not supported; this server takes public clients (none)", hub.Echo(s.TokenEndpointAuthMethod))
	}
	for _, g := range s.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "grant type %q is not supported; the grant types are authorization_code and refresh_token", hub.Echo(g))
		}
	}
	for _, rt := range s.ResponseTypes {
		if rt != "code" {
			return oauthErr(hub.KindInvalid, OAuthInvalidMetadata, "response type %q is not supported; the response type is code", hub.Echo(rt))
		}
	}
	return nil
}

// RegisterClient registers a public client (RFC 7591) and returns it with
// the id it is to send as client_id.
func (au *Authority) RegisterClient(ctx context.Context, s ClientSpec) (*hub.OAuthClient, error) {
	if err := checkClient(&s); err != nil {
		return nil, err
	}
	now := au.hub.Now()
	// Registration needs no account, so each address may register only
	// so many clients (§15); a refused or failed one costs nothing.
	refund, wait := au.throttle.Take(now, "register:"+throttle.AddressKey(s.From), registrations)
	if refund == nil {
		return nil, hub.Throttled("clients registered from here", wait)
	}
	c := &hub.OAuthClient{ID: hub.NewID(hub.IDOAuthClient, now), Name: s.Name, RedirectURIs: s.RedirectURIs, ApplicationType: s.ApplicationType, CreatedAt: now}
	if err := au.store.Update(ctx, func(tx hub.Tx) error { return tx.PutOAuthClient(ctx, c) }); err != nil {
		refund()
		return nil, hub.AsError(err)
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
// ClientDocumentTTL) for a requester at the address from. Unknown,
// unfetchable or invalid: invalid_client.
func (au *Authority) client(ctx context.Context, id, from string) (*hub.OAuthClient, error) {
	if id == "" {
		return nil, oauthErr(hub.KindInvalid, OAuthInvalidRequest, "client_id is missing")
	}
	if !isDocumentID(id) {
		c, err := au.store.OAuthClient(ctx, id)
		if errors.Is(err, hub.ErrNoRows) || (err == nil && c.Document) {
			return nil, oauthErr(hub.KindInvalid, OAuthInvalidClient, "no client has the id %q; register it first (the registration endpoint is in the server's metadata)", hub.Echo(id))
		}
		if err != nil {
			return nil, hub.AsError(err)
		}
		return c, nil
	}
	now := au.hub.Now()
	c, err := au.store.OAuthClient(ctx, id)
	switch {
	case err == nil && c.Document && now.Sub(c.FetchedAt) < ClientDocumentTTL:
		return c, nil
	case err != nil && !errors.Is(err, hub.ErrNoRows):
		return nil, hub.AsError(err)
	}
	fetched, err := au.fetchClient(ctx, id, from)
	if err != nil {
		return nil, err
	}
	fetched.CreatedAt, fetched.FetchedAt = now, now
	if c != nil {
		fetched.CreatedAt = c.CreatedAt
	}
	if err := au.store.Update(ctx, func(tx hub.Tx) error { return tx.PutOAuthClient(ctx, fetched) }); err != nil {
		return nil, hub.AsError(err)
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
// https with a path, its host is reached only at an address the egress
// policy lets through (AllowFetch) (checked again when connecting, so a name that resolves to
// a private address is never fetched), and it names itself by that URL.
// A fetch needs no account, so each address may make only so many
// (§15), as registrations; what went wrong is said in words for people,
// its cause only logged.
func (au *Authority) fetchClient(ctx context.Context, id, from string) (*hub.OAuthClient, error) {
	bad := func(format string, args ...any) error {
		return oauthErr(hub.KindInvalid, OAuthInvalidClient, "the client id %q: "+format, append([]any{hub.Echo(id)}, args...)...)
	}
	u, err := url.Parse(id)
	switch {
	case err != nil || u.Scheme != "https" || u.Host == "":
		return nil, bad("a client id that is a URL must be https")
	case u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil || slices.Contains(strings.Split(u.Path, "/"), ".") || slices.Contains(strings.Split(u.Path, "/"), ".."):
		return nil, bad("a client ID metadata document is at an https URL with a path, and no fragment, user info or dot segments")
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if r := au.hub.Egress().Refuse(host, ip); r != nil {
			return nil, bad("its host is %s, which this server does not fetch from", r)
		}
	}
	if au.fetcher == nil {
		return nil, bad("this server fetches no client documents")
	}
	if refund, wait := au.throttle.Take(au.hub.Now(), "fetch:"+throttle.AddressKey(from), documentFetches); refund == nil {
		return nil, hub.Throttled("client metadata documents fetched from here", wait)
	}
	body, err := au.fetcher.Fetch(ctx, id, au.hub.Egress().Allows(host), ClientDocumentMaxBytes)
	if err != nil {
		au.log.Info("fetching a client ID metadata document", "client_id", id, "from", from, "err", err)
		return nil, bad("its metadata document could not be fetched: %s", egress.Describe(err))
	}
	var d clientDocument
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, bad("its metadata document is not a JSON object")
	}
	if d.ClientID != id {
		return nil, bad("its metadata document names another client_id (%q)", hub.Echo(d.ClientID))
	}
	if d.ClientSecret != "" {
		return nil, bad("its metadata document holds a client_secret; a document describes a public client")
	}
	s := ClientSpec{Name: d.ClientName, RedirectURIs: d.RedirectURIs, ApplicationType: d.ApplicationType,
		TokenEndpointAuthMethod: d.TokenEndpointAuthMethod, GrantTypes: d.GrantTypes, ResponseTypes: d.ResponseTypes}
	if s.TokenEndpointAuthMethod != "" && s.TokenEndpointAuthMethod != "none" {
		return nil, bad("its token_endpoint_auth_method is %q; a document describes a public client (none)", hub.Echo(s.TokenEndpointAuthMethod))
	}
	if err := checkClient(&s); err != nil {
		return nil, bad("%s", hub.AsError(err).Msg)
	}
	return &hub.OAuthClient{ID: id, Name: s.Name, RedirectURIs: s.RedirectURIs, ApplicationType: s.ApplicationType, Document: true}, nil
}

// hiddenRune is the first character of s that shows nothing or changes how
// the text around it shows — a control, a format character (the bidi
// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
// zero-width spaces and joiners U+200B–U+200F, the word joiner U+2060,
// the byte order mark U+FEFF …), a line or paragraph separator, or one
// Unicode says to ignore in display (Hangul fillers, U+2800) — for names
// a person must read as they are.
func hiddenRune(s string) (rune, bool) {
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point) || r == '\u2800' {
			return r, true
		}
	}
	return 0, false
}
