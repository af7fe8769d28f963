package oauth_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/servertest"
)

var ctx = context.Background()

type server struct {
	url  string
	hub  *hub.Hub
	auth *oauth.Authority
}

// newServer is the MCP and OAuth faces on a temp database, with alice and
// her agent planner; client documents are fetched trusting roots.
func newServer(t *testing.T, roots *x509.CertPool, private ...string) *server {
	t.Helper()
	s := servertest.Open(t, servertest.Options{MCP: true, OAuth: true, Fetcher: &oauth.Fetcher{RootCAs: roots}, Hub: func(o *hub.Options) {
		o.PrivateHosts = private
	}})
	s.Person(t, "alice")
	s.Agent(t, "alice/planner", "")
	return &server{url: s.URL, hub: s.Hub, auth: s.OAuth}
}

func getJSON(t *testing.T, u string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestMetadata: the authorization server's metadata, at both discovery
// paths, has exactly the fields DESIGN §10.6 lists, every URL under the
// issuer.
func TestMetadata(t *testing.T) {
	s := newServer(t, nil)
	want := map[string]any{
		"issuer":                                         s.url,
		"authorization_endpoint":                         s.url + "/authorize",
		"token_endpoint":                                 s.url + "/token",
		"registration_endpoint":                          s.url + "/register",
		"revocation_endpoint":                            s.url + "/revoke",
		"scopes_supported":                               []any{"msg:read", "msg:write", "contacts:read"},
		"response_types_supported":                       []any{"code"},
		"response_modes_supported":                       []any{"query"},
		"grant_types_supported":                          []any{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []any{"none"},
		"revocation_endpoint_auth_methods_supported":     []any{"none"},
		"code_challenge_methods_supported":               []any{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		status, got := getJSON(t, s.url+path)
		if diff := cmp.Diff(want, got); status != http.StatusOK || diff != "" {
			t.Errorf("GET %s: %d (-want +got):\n%s", path, status, diff)
		}
	}
	status, prm := getJSON(t, s.url+"/.well-known/oauth-protected-resource/mcp/")
	if status != http.StatusOK || !cmp.Equal(prm["authorization_servers"], []any{s.url}) {
		t.Errorf("the resource metadata names %v, want the issuer %s", prm["authorization_servers"], s.url)
	}
}

// register registers a public client with one redirect URI.
func (s *server) register(t *testing.T, redirect string) string {
	t.Helper()
	body := `{"client_name":"Test","redirect_uris":["` + redirect + `"],"token_endpoint_auth_method":"client_secret_basic","application_type":"native"}`
	resp, err := http.Post(s.url+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	json.NewDecoder(resp.Body).Decode(&got)
	id, _ := got["client_id"].(string)
	if resp.StatusCode != http.StatusCreated || got["token_endpoint_auth_method"] != "none" || got["application_type"] != "native" || got["client_secret"] != nil || id == "" {
		t.Fatalf("register: %d %v", resp.StatusCode, got)
	}
	return id
}

// code lets alice consent (as the consent page would) to the client's
// request and returns the code the redirect carries.
func (s *server) code(t *testing.T, conf *oauth2.Config, verifier string) string {
	t.Helper()
	u, _ := url.Parse(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", s.url+"/mcp/")))
	alice, _ := s.hub.User(ctx, "alice")
	to, err := s.auth.Authorize(ctx, alice, oauth.ParseAuthRequest(u.Query(), s.url, oauth.Resources(s.url, []string{"/mcp/", "/mcp/inbox/"})),
		oauth.Consent{Agent: "planner", Scopes: []string{hub.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := url.Parse(to)
	return r.Query().Get("code")
}

// TestTokenEndpoint: golang.org/x/oauth2 exchanges a code with its PKCE
// verifier; a wrong verifier gets an RFC 6749 invalid_grant body with
// Cache-Control: no-store; the token works at its resource and is 401 at
// another profile's.
func TestTokenEndpoint(t *testing.T) {
	s := newServer(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	conf := &oauth2.Config{ClientID: s.register(t, redirect), RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: s.url + "/authorize", TokenURL: s.url + "/token", AuthStyle: oauth2.AuthStyleInParams}}

	verifier := oauth2.GenerateVerifier()
	code := s.code(t, conf, verifier)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {conf.ClientID},
		"code_verifier": {oauth2.GenerateVerifier()}}
	resp, err := http.PostForm(s.url+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e map[string]string
	json.Unmarshal(b, &e)
	if resp.StatusCode != http.StatusBadRequest || e["error"] != "invalid_grant" || !strings.Contains(e["error_description"], "code_verifier") ||
		resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("a wrong verifier: %d %s %v", resp.StatusCode, b, resp.Header)
	}

	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", s.url+"/mcp/"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.TokenType != "Bearer" || tok.RefreshToken == "" || tok.Extra("scope") != "msg:read" || tok.ExpiresIn != 3600 {
		t.Fatalf("token: %+v scope %v", tok, tok.Extra("scope"))
	}
	for path, want := range map[string]int{"/mcp/": http.StatusOK, "/mcp": http.StatusOK, "/mcp/inbox/": http.StatusUnauthorized} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST %s with a token for /mcp/: %d, want %d", path, resp.StatusCode, want)
		}
	}

	// A refresh rotates; revoking the new refresh token ends the grant.
	fresh, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil || fresh.RefreshToken == tok.RefreshToken {
		t.Fatalf("refresh: %v", err)
	}
	resp, err = http.PostForm(s.url+"/revoke", url.Values{"token": {fresh.RefreshToken}, "client_id": {conf.ClientID}})
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	if _, err := s.hub.Authenticate(ctx, fresh.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after revoking its refresh token, the access token: %v", err)
	}
}

// TestAuthorizeEndpoint: a good request goes to the consent page; a
// redirect URI a character off is told to the person, never redirected
// to; a request without PKCE goes back to the client with the error,
// state and iss.
func TestAuthorizeEndpoint(t *testing.T) {
	s := newServer(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	id := s.register(t, redirect)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(q url.Values) *http.Response {
		t.Helper()
		resp, err := noRedirect.Get(s.url + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	q := url.Values{"response_type": {"code"}, "client_id": {id}, "redirect_uri": {redirect}, "state": {"xyz"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())}, "code_challenge_method": {"S256"}}
	if resp := get(q); resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "/consent?") {
		t.Errorf("a good request: %d to %q, want the consent page", resp.StatusCode, resp.Header.Get("Location"))
	}
	off := url.Values{}
	for k, v := range q {
		off[k] = v
	}
	off.Set("redirect_uri", "http://127.0.0.1:9/callbacK")
	if resp := get(off); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("a redirect URI a character off: %d to %q, want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
	}
	// A loopback redirect URI may name another port, but nothing more.
	for _, bad := range []string{"http://127.0.0.1:4444/callback#frag", "http://user@127.0.0.1:4444/callback"} {
		other := url.Values{}
		for k, v := range q {
			other[k] = v
		}
		other.Set("redirect_uri", bad)
		if resp := get(other); resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("the redirect URI %s: %d to %q, want 400 and no redirect", bad, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	q.Del("code_challenge")
	resp := get(q)
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("error") != "invalid_request" ||
		loc.Query().Get("state") != "xyz" || loc.Query().Get("iss") != s.url {
		t.Errorf("no PKCE: %d to %s", resp.StatusCode, loc)
	}
}

// TestDocumentAtPrivateAddress: a client ID metadata document whose host
// is loopback is never fetched — not by its address, nor by a name that
// resolves to it — until the admin lets the host through.
func TestDocumentAtPrivateAddress(t *testing.T) {
	var hits atomic.Int32
	var docURL string
	doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "redirect_uris": []string{"http://127.0.0.1:9/callback"}})
	}))
	t.Cleanup(doc.Close)
	roots := x509.NewCertPool()
	roots.AddCert(doc.Certificate())
	port := doc.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	authorize := func(s *server, host string) (int, string) {
		docURL = "https://" + host + ":" + port + "/client.json"
		q := url.Values{"response_type": {"code"}, "client_id": {docURL}, "redirect_uri": {"http://127.0.0.1:9/callback"},
			"code_challenge": {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())}, "code_challenge_method": {"S256"}}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(s.url + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	s := newServer(t, roots)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if status, body := authorize(s, host); status != http.StatusBadRequest || hits.Load() != 0 || !strings.Contains(body, " 127.0.0.1, a loopback address (127.0.0.0/8)") ||
			strings.Contains(body, "Get \"") || strings.Contains(body, "dial") {
			t.Errorf("a document at %s: %d %q, fetched %d times; want 400 saying it is at a loopback address, never fetched", host, status, body, hits.Load())
		}
	}
	allowed := newServer(t, roots, "127.0.0.1")
	if status, body := authorize(allowed, "127.0.0.1"); status != http.StatusFound || hits.Load() != 1 {
		t.Errorf("let through: %d %q, fetched %d times", status, body, hits.Load())
	}
}

// TestErrorCodes: every error kind has an RFC 6749 code and status.
func TestErrorCodes(t *testing.T) {
	want := map[hub.Kind][2]any{
		hub.KindInternal:        {"server_error", 500},
		hub.KindNotFound:        {"invalid_request", 400},
		hub.KindInvalid:         {"invalid_request", 400},
		hub.KindConflict:        {"invalid_request", 400},
		hub.KindForbidden:       {"access_denied", 403},
		hub.KindUnauthenticated: {"invalid_client", 401},
		hub.KindRateLimited:     {"temporarily_unavailable", 429},
	}
	for _, k := range hub.Kinds {
		code, status := oauth.OAuthCode(k)
		if w, ok := want[k]; !ok || w[0] != code || w[1] != status {
			t.Errorf("%v: %s %d, want %v", k, code, status, want[k])
		}
	}
}

// TestRegisterThrottled: past its registrations, an address gets 429 with
// Retry-After and an RFC 6749 error code.
func TestRegisterThrottled(t *testing.T) {
	s := newServer(t, nil)
	body := `{"client_name":"Test","redirect_uris":["http://127.0.0.1:9/cb"]}`
	var resp *http.Response
	for range 11 {
		var err error
		if resp, err = http.Post(s.url+"/register", "application/json", strings.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("the 11th registration: %d Retry-After %q, want 429 and 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp, err := http.Post(s.url+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if e["error"] != "temporarily_unavailable" {
		t.Errorf("the refusal: %v, want error temporarily_unavailable", e)
	}
}

// TestParallelRefresh: two refreshes with one refresh token sent at once,
// as the TypeScript MCP SDK sends them when several calls meet an expired
// token, both get the same new tokens, and the grant stays.
func TestParallelRefresh(t *testing.T) {
	s := newServer(t, nil)
	redirect := "http://127.0.0.1:9/callback"
	conf := &oauth2.Config{ClientID: s.register(t, redirect), RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: s.url + "/authorize", TokenURL: s.url + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	tok, err := conf.Exchange(ctx, s.code(t, conf, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {conf.ClientID}}
	got := make([]map[string]any, 2)
	status := make([]int, 2)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			resp, err := http.PostForm(s.url+"/token", form)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			status[i] = resp.StatusCode
			json.NewDecoder(resp.Body).Decode(&got[i])
		})
	}
	wg.Wait()
	if status[0] != http.StatusOK || status[1] != http.StatusOK || got[0]["access_token"] != got[1]["access_token"] ||
		got[0]["refresh_token"] != got[1]["refresh_token"] || got[0]["refresh_token"] == tok.RefreshToken {
		t.Fatalf("two refreshes at once: %d %v and %d %v; want one new pair for both", status[0], got[0], status[1], got[1])
	}
	if _, err := s.hub.Authenticate(ctx, got[0]["access_token"].(string)); err != nil {
		t.Fatalf("the new access token: %v", err)
	}
}

// TestRootResourceMetadata: the protected resource metadata at the root
// names the resource it is the metadata of — the server's own URL, where
// the well-known path was inserted (RFC 9728 §3) — and is answered to any
// origin as the authorization server's metadata is. A token issued for
// that resource serves every endpoint; one for an endpoint, only it.
func TestRootResourceMetadata(t *testing.T) {
	s := newServer(t, nil)
	status, prm := getJSON(t, s.url+"/.well-known/oauth-protected-resource")
	want := map[string]any{"resource": s.url, "authorization_servers": []any{s.url}, "scopes_supported": []any{"msg:read", "msg:write", "contacts:read"},
		"bearer_methods_supported": []any{"header"}, "resource_name": "Palaver"}
	if diff := cmp.Diff(want, prm); status != http.StatusOK || diff != "" {
		t.Errorf("GET the root's metadata: %d (-want +got):\n%s", status, diff)
	}
	cors := func(method, path string) http.Header {
		req, _ := http.NewRequest(method, s.url+path, nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		h.Set("Status", resp.Status)
		return h
	}
	for _, method := range []string{http.MethodOptions, http.MethodGet} {
		as, root := cors(method, "/.well-known/oauth-authorization-server"), cors(method, "/.well-known/oauth-protected-resource")
		for _, k := range []string{"Status", "Access-Control-Allow-Origin", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers"} {
			if as.Get(k) != root.Get(k) {
				t.Errorf("%s from another origin, %s: the root's metadata %q, the authorization server's %q", method, k, root.Get(k), as.Get(k))
			}
		}
		if root.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s from another origin: Access-Control-Allow-Origin %q; want *", method, root.Get("Access-Control-Allow-Origin"))
		}
	}

	redirect := "http://127.0.0.1:9/callback"
	conf := &oauth2.Config{ClientID: s.register(t, redirect), RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: s.url + "/authorize", TokenURL: s.url + "/token", AuthStyle: oauth2.AuthStyleInParams}}
	for resource, want := range map[string]map[string]int{
		s.url + "/":     {"/mcp/": http.StatusOK, "/mcp/inbox/": http.StatusOK, "/mcp/rooms/": http.StatusOK},
		s.url:           {"/mcp/": http.StatusOK, "/mcp/inbox/": http.StatusOK},
		s.url + "/mcp/": {"/mcp/": http.StatusOK, "/mcp/inbox/": http.StatusUnauthorized},
	} {
		verifier := oauth2.GenerateVerifier()
		u, _ := url.Parse(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource)))
		alice, _ := s.hub.User(ctx, "alice")
		to, err := s.auth.Authorize(ctx, alice, oauth.ParseAuthRequest(u.Query(), s.url, oauth.Resources(s.url, []string{"/mcp/", "/mcp/inbox/", "/mcp/rooms/"})),
			oauth.Consent{Agent: "planner", Scopes: []string{hub.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		r, _ := url.Parse(to)
		if r.Query().Get("code") == "" {
			t.Fatalf("authorizing the resource %s: %s", resource, to)
		}
		tok, err := conf.Exchange(ctx, r.Query().Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", resource))
		if err != nil {
			t.Fatal(err)
		}
		for path, status := range want {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
			req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != status {
				t.Errorf("a token for %s at %s: %d, want %d", resource, path, resp.StatusCode, status)
			}
		}
	}
}

// TestRegistrationEchoesWhatIsStored: the registration response holds
// what the server stored and how it serves the client — never metadata
// it was sent and does not keep.
func TestRegistrationEchoesWhatIsStored(t *testing.T) {
	s := newServer(t, nil)
	body := `{"client_name":"Test","redirect_uris":["http://127.0.0.1:9/cb"],"application_type":"native","grant_types":["authorization_code"],
		"client_uri":"https://evil.example","logo_uri":"https://evil.example/logo.png","scope":"admin","contacts":["a@evil.example"],
		"tos_uri":"https://evil.example/tos","policy_uri":"https://evil.example/p","jwks_uri":"https://evil.example/jwks","software_id":"x","software_version":"1",
		"software_statement":"eyJ"}`
	resp, err := http.Post(s.url+"/register", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	json.NewDecoder(resp.Body).Decode(&got)
	id, _ := got["client_id"].(string)
	issued, _ := got["client_id_issued_at"].(float64)
	want := map[string]any{"client_id": id, "client_id_issued_at": issued, "client_name": "Test", "redirect_uris": []any{"http://127.0.0.1:9/cb"},
		"application_type": "native", "token_endpoint_auth_method": "none", "grant_types": []any{"authorization_code", "refresh_token"}, "response_types": []any{"code"}}
	if diff := cmp.Diff(want, got); resp.StatusCode != http.StatusCreated || diff != "" || id == "" || issued == 0 {
		t.Errorf("register: %d (-want +got):\n%s", resp.StatusCode, diff)
	}
}

// TestDocumentFetchesThrottled: /authorize fetches client metadata
// documents for an address only so often — refused ones count — and then
// says to wait, with Retry-After.
func TestDocumentFetchesThrottled(t *testing.T) {
	s := newServer(t, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var resp *http.Response
	for i := range 11 {
		q := url.Values{"response_type": {"code"}, "client_id": {fmt.Sprintf("https://localhost:1/client-%d.json", i)}, "redirect_uri": {"http://127.0.0.1:9/callback"},
			"code_challenge": {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())}, "code_challenge_method": {"S256"}}
		var err error
		if resp, err = c.Get(s.url + "/authorize?" + q.Encode()); err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if i < 10 && (resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "a loopback address")) {
			t.Fatalf("fetch %d: %d %s; want 400, refused at a loopback address", i+1, resp.StatusCode, b)
		}
		if i == 10 && !strings.Contains(string(b), "too many client metadata documents fetched from here; wait 60 seconds") {
			t.Errorf("the 11th: %s", b)
		}
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Errorf("the 11th fetch from one address: %d, Retry-After %q; want 429 and 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
