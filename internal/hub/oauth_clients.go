package hub

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/throttle"

	"github.com/palaverhq/palaver/internal/egress"
)

// OAuth clients (§10.6): registered ones (RFC 7591) and those known by a
// client ID metadata document, fetched only where the hub allows.

// DocumentFetcher fetches a client ID metadata document: an https GET of
// url that connects to no address allow refuses, follows no redirect,
// reads at most max bytes and gives up after a short timeout. The hub
// decides what may be fetched; the fetcher only obeys.
type DocumentFetcher interface {
	Fetch(ctx context.Context, url string, allow func(netip.Addr) bool, max int64) ([]byte, error)
}

// AllowFetch reports whether host may be called at the address ip — a
// client document fetched (§10.6), a webhook called (§18): the egress
// policy (internal/egress: globally reachable addresses, the IPv4 address
// an IPv6 one carries judged too), with any address of a host the admin
// let through (Options.PrivateHosts, `palaver serve --allow-private-host`).
func (h *Hub) AllowFetch(host string, ip netip.Addr) bool { return h.egressPolicy.Allow(host, ip) }

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
	if r, ok := hiddenRune(name); ok {
		// The consent page shows the name to the person deciding: it must
		// read as what it is, not as another client's.
		return oauthErr(KindInvalid, OAuthInvalidMetadata, "client_name holds U+%04X, an invisible or text-direction character, which could make it show as another name; give a name of visible characters only", r)
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
	refund, wait := h.signins.Take(now, "register:"+throttle.AddressKey(s.From), registrations)
	if refund == nil {
		return nil, Throttled("clients registered from here", wait)
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
// ClientDocumentTTL) for a requester at the address from. Unknown,
// unfetchable or invalid: invalid_client.
func (h *Hub) client(ctx context.Context, id, from string) (*OAuthClient, error) {
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
	fetched, err := h.fetchClient(ctx, id, from)
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
// https with a path, its host is reached only at an address the egress
// policy lets through (AllowFetch) (checked again when connecting, so a name that resolves to
// a private address is never fetched), and it names itself by that URL.
// A fetch needs no account, so each address may make only so many
// (§15), as registrations; what went wrong is said in words for people,
// its cause only logged.
func (h *Hub) fetchClient(ctx context.Context, id, from string) (*OAuthClient, error) {
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
	if ip, err := netip.ParseAddr(host); err == nil {
		if r := h.egressPolicy.Refuse(host, ip); r != nil {
			return nil, bad("its host is %s, which this server does not fetch from", r)
		}
	}
	if h.fetcher == nil {
		return nil, bad("this server fetches no client documents")
	}
	if refund, wait := h.signins.Take(h.now(), "fetch:"+throttle.AddressKey(from), documentFetches); refund == nil {
		return nil, Throttled("client metadata documents fetched from here", wait)
	}
	body, err := h.fetcher.Fetch(ctx, id, h.egressPolicy.Allows(host), ClientDocumentMaxBytes)
	if err != nil {
		h.log.Info("fetching a client ID metadata document", "client_id", id, "from", from, "err", err)
		return nil, bad("its metadata document could not be fetched: %s", egress.Describe(err))
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
