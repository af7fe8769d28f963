// Package oauth is Palaver's OAuth 2.1 authorization server face (DESIGN.md
// §2, §10.6): its metadata (RFC 8414, and the OpenID discovery path),
// dynamic client registration (RFC 7591), the authorization endpoint —
// which checks the request and hands the person to the dashboard's consent
// page — the token endpoint and revocation (RFC 7009). Every rule is the
// hub's; handlers decode, make one hub call and answer, and writeError is
// the one translation of errors into RFC 6749 error bodies.
package oauth

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

// Paths of the endpoints; ConsentPath is the dashboard's consent page.
const (
	AuthorizePath  = "/authorize"
	TokenPath      = "/token"
	RegisterPath   = "/register"
	RevokePath     = "/revoke"
	ConsentPath    = "/consent"
	metadataPath   = "/.well-known/oauth-authorization-server"
	openIDPath     = "/.well-known/openid-configuration"
	maxRequestBody = 64 << 10
)

// Options configure the face.
type Options struct {
	// Authority is the authorization server's logic the endpoints call.
	Authority *Authority
	Logger    *slog.Logger
	// BaseURL is the public URL, the issuer and the root of every URL the
	// metadata names; "" uses the request's own (addresses and localhost
	// only, httpx.KnownHost).
	BaseURL string
	// Resources are the paths of the resources tokens may be for, the
	// default first: the MCP endpoints (mcpserver.Server.ResourcePaths)
	// and the A2A one (hub.A2AResourcePath).
	Resources []string
	// Proxies are the reverse proxies whose X-Forwarded-For names the
	// client (httpx.ClientAddr), for throttling registrations per address.
	Proxies []netip.Prefix
}

// Server serves the OAuth endpoints.
type Server struct {
	auth      *Authority
	log       *slog.Logger
	base      string
	host      string
	resources []string
	proxies   []netip.Prefix
}

// New returns the face.
func New(o Options) *Server {
	s := &Server{auth: o.Authority, log: o.Logger, base: strings.TrimSuffix(o.BaseURL, "/"), resources: o.Resources, proxies: o.Proxies}
	if u, err := url.Parse(s.base); err == nil {
		s.host = u.Host
	}
	return s
}

// Register mounts the endpoints on mux.
func (s *Server) Register(mux *http.ServeMux) {
	for _, rt := range []struct {
		pattern string
		methods string
		h       http.HandlerFunc
	}{
		{metadataPath, "GET", s.metadata},
		{openIDPath, "GET", s.metadata},
		{ResourceMetadataPath, "GET", s.resourceMetadata},
		{AuthorizePath, "GET", s.authorize},
		{TokenPath, "POST", s.token},
		{RegisterPath, "POST", s.register},
		{RevokePath, "POST", s.revoke},
	} {
		mux.Handle(rt.pattern, s.guard(rt.methods, rt.h))
	}
	// Discovery falls back from one well-known path to the next on a 404,
	// so one that is not served must be that, never the dashboard's
	// redirect to sign in.
	mux.HandleFunc("/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing is served at "+r.URL.Path+"; this server's OAuth metadata is at "+metadataPath, http.StatusNotFound)
	})
}

// guard serves only this server's own Host (so an issuer is never taken
// from a forged one), answers CORS for browser-based clients — the
// endpoints use no cookies, so any origin may call them — and refuses
// other methods.
func (s *Server) guard(methods string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.KnownHost(s.host, r.Host) {
			http.Error(w, "this server is not served as "+r.Host+"; use its --base-url", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Method != methods && !(methods == "GET" && r.Method == http.MethodHead) {
			h.Set("Allow", methods)
			writeError(w, &hub.Error{Kind: hub.KindInvalid, Code: OAuthInvalidRequest, Msg: "use " + methods}, http.StatusMethodNotAllowed)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		next(w, r)
	})
}

// issuer is this server's issuer identifier: its base URL.
func (s *Server) issuer(r *http.Request) string {
	return strings.TrimSuffix(httpx.BaseURL(s.base, r), "/")
}

// authServerMeta is RFC 8414 metadata with exactly the fields §10.6 lists
// (oauthex.AuthServerMeta always writes an empty jwks_uri).
type authServerMeta struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	iss := s.issuer(r)
	writeJSON(w, http.StatusOK, &authServerMeta{
		Issuer:                                     iss,
		AuthorizationEndpoint:                      iss + AuthorizePath,
		TokenEndpoint:                              iss + TokenPath,
		RegistrationEndpoint:                       iss + RegisterPath,
		RevocationEndpoint:                         iss + RevokePath,
		ScopesSupported:                            hub.AllScopes,
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		ClientIDMetadataDocumentSupported:          true,
		AuthorizationResponseIssParameterSupported: true,
	})
}

// resourceMetadata is the protected resource metadata (RFC 9728) at the
// root: that of the resource identified by the server's URL itself — the
// one the well-known path was inserted into — whose tokens serve every
// endpoint of the server (§10.6).
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	iss := s.issuer(r)
	writeJSON(w, http.StatusOK, ResourceMetadata(iss, iss))
}

// ParseAuthRequest decodes an authorization request from a query (or the
// consent page's form), with this server's issuer and resources.
func ParseAuthRequest(q url.Values, issuer string, resources []string) AuthRequest {
	return AuthRequest{
		ResponseType:        q.Get("response_type"),
		ClientID:            q.Get("client_id"),
		RedirectURI:         q.Get("redirect_uri"),
		Scope:               q.Get("scope"),
		State:               q.Get("state"),
		CodeChallenge:       q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"),
		Resource:            q.Get("resource"),
		Issuer:              issuer,
		Resources:           resources,
	}
}

// AuthParams are the query parameters of an authorization request, which
// the consent page carries through its form.
var AuthParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"}

// Resources are the absolute URLs of the resources at paths under a base,
// then the base itself: the server as a whole, the resource of the root
// protected resource metadata.
func Resources(base string, paths []string) []string {
	out := make([]string, 0, len(paths)+1)
	for _, p := range paths {
		out = append(out, base+p)
	}
	return append(out, base)
}

// authorize checks the request and sends the person to the consent page
// (signing in first), or tells the client by its redirect URI what is
// wrong — unless the client or the redirect URI is what is wrong, which
// only the person is told (RFC 6749 §4.1.2.1).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	iss := s.issuer(r)
	req := ParseAuthRequest(r.URL.Query(), iss, Resources(iss, s.resources))
	req.From = httpx.ClientAddr(r, s.proxies)
	a, err := s.auth.CheckAuthorization(r.Context(), req)
	switch {
	case err != nil && a != nil:
		http.Redirect(w, r, a.ErrorRedirect(err), http.StatusFound)
	case err != nil:
		e := hub.AsError(err)
		if e.Kind == hub.KindInternal {
			s.log.Error("authorization request", "err", err)
		}
		if retry, ok := e.Details["retry_after_s"]; ok { // client documents fetched too often from here
			w.Header().Set("Retry-After", fmt.Sprint(retry))
		}
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "This sign-in link is not valid, so nothing was sent back to the application: "+e.Text(nil, nil), httpx.Status(e.Kind))
	default:
		http.Redirect(w, r, ConsentPath+"?"+r.URL.RawQuery, http.StatusFound)
	}
}

// clientID is the client a token or revocation request names: in the
// form, or as the user of HTTP Basic authentication (a public client sends
// no secret, or an empty one).
func clientID(r *http.Request) string {
	if id, _, ok := r.BasicAuth(); ok {
		if id, err := url.QueryUnescape(id); err == nil && id != "" {
			return id
		}
	}
	return r.PostFormValue("client_id")
}

// tokenResponse is RFC 6749 §5.1.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.writeError(w, &hub.Error{Kind: hub.KindInvalid, Code: OAuthInvalidRequest, Msg: "the body must be a form (application/x-www-form-urlencoded) of at most 64 KiB"})
		return
	}
	f := r.PostFormValue
	t, err := s.auth.ExchangeToken(r.Context(), TokenRequest{
		GrantType: f("grant_type"), ClientID: clientID(r), Code: f("code"), RedirectURI: f("redirect_uri"),
		CodeVerifier: f("code_verifier"), RefreshToken: f("refresh_token"), Resource: f("resource"), Scope: f("scope"),
	})
	if err != nil {
		s.writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, &tokenResponse{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresIn: int64(t.ExpiresIn / time.Second),
		RefreshToken: t.RefreshToken, Scope: strings.Join(t.Scopes, " ")})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var m oauthex.ClientRegistrationMetadata
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		s.writeError(w, &hub.Error{Kind: hub.KindInvalid, Code: OAuthInvalidMetadata, Msg: "the body must be a JSON object of client metadata (RFC 7591) of at most 64 KiB"})
		return
	}
	c, err := s.auth.RegisterClient(r.Context(), ClientSpec{Name: m.ClientName, RedirectURIs: m.RedirectURIs, ApplicationType: m.ApplicationType,
		TokenEndpointAuthMethod: m.TokenEndpointAuthMethod, GrantTypes: m.GrantTypes, ResponseTypes: m.ResponseTypes,
		From: httpx.ClientAddr(r, s.proxies)})
	if err != nil {
		s.writeError(w, err)
		return
	}
	// The answer says what was stored and how the client is served, not
	// what it asked for (RFC 7591 §3.2.1): a public client, both grants.
	stored := oauthex.ClientRegistrationMetadata{ClientName: c.Name, RedirectURIs: c.RedirectURIs, ApplicationType: c.ApplicationType,
		TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}}
	writeJSON(w, http.StatusCreated, &oauthex.ClientRegistrationResponse{ClientRegistrationMetadata: stored, ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt})
}

// revoke answers 200 whether or not the token was known (RFC 7009 §2.2).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.writeError(w, &hub.Error{Kind: hub.KindInvalid, Code: OAuthInvalidRequest, Msg: "the body must be a form of at most 64 KiB"})
		return
	}
	if err := s.auth.RevokeOAuthToken(r.Context(), clientID(r), r.PostFormValue("token")); err != nil {
		s.writeError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// writeJSON answers JSON that no cache keeps (RFC 6749 §5.1).
func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// errorBody is RFC 6749 §5.2 (and RFC 7591 §3.2.2).
type errorBody struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description,omitempty"`
}

// oauthCode is the RFC 6749 error code and HTTP status of each kind, for
// an Error that names no OAuth code of its own.
func oauthCode(k hub.Kind) (string, int) {
	switch k {
	case hub.KindInvalid, hub.KindNotFound, hub.KindConflict:
		return OAuthInvalidRequest, http.StatusBadRequest
	case hub.KindForbidden:
		return OAuthAccessDenied, http.StatusForbidden
	case hub.KindUnauthenticated:
		return OAuthInvalidClient, http.StatusUnauthorized
	case hub.KindRateLimited:
		return "temporarily_unavailable", http.StatusTooManyRequests
	}
	return "server_error", http.StatusInternalServerError
}

// writeError is the face's one translation of errors (CONVENTIONS
// "Errors"): an RFC 6749 error body; internal causes are logged, never
// shown.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	e := hub.AsError(err)
	code, status := oauthCode(e.Kind)
	if e.Kind == hub.KindInternal {
		s.log.Error("oauth", "err", err)
		writeError(w, &hub.Error{Kind: hub.KindInternal, Code: code, Msg: "internal error; try again"}, status)
		return
	}
	if e.Code != "" && e.Kind != hub.KindRateLimited { // a throttle's code is no RFC 6749 one
		code = e.Code
	}
	if retry, ok := e.Details["retry_after_s"]; ok {
		w.Header().Set("Retry-After", fmt.Sprint(retry))
	}
	if code == OAuthInvalidClient {
		status = http.StatusUnauthorized
	}
	s.log.Info("oauth refused", "code", code, "message", e.Text(nil, nil))
	writeError(w, &hub.Error{Kind: e.Kind, Code: code, Msg: e.Text(nil, nil)}, status)
}

func writeError(w http.ResponseWriter, e *hub.Error, status int) {
	writeJSON(w, status, &errorBody{Error: e.WireCode(), ErrorDescription: e.Text(nil, nil)})
}

var _ DocumentFetcher = (*Fetcher)(nil)
