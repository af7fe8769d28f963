package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

const (
	issuer   = "https://palaver.example"
	resource = "https://palaver.example/mcp/"
	redirect = "http://127.0.0.1:5555/callback"
	verifier = "a-verifier-of-forty-three-characters-or-more-0123456789"
)

func challenge(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

var resources = []string{resource, "https://palaver.example/mcp/inbox/"}

func authRequest(clientID string) oauth.AuthRequest {
	return oauth.AuthRequest{ResponseType: "code", ClientID: clientID, RedirectURI: redirect, State: "st-1",
		CodeChallenge: challenge(verifier), CodeChallengeMethod: "S256", Resource: resource, Issuer: issuer, Resources: resources}
}

// oauthCode asserts err is an Error with the OAuth code.
func oauthCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *hub.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got %v, want an error with code %s", err, code)
	}
}

// authorize registers a client, lets it act as alice/planner with scopes
// and returns the client id and the code the redirect carries.
func (w *world) authorize(t *testing.T, scopes ...string) (string, string) {
	t.Helper()
	c, err := w.auth.RegisterClient(ctx, oauth.ClientSpec{Name: "Test client", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	to, err := w.auth.Authorize(ctx, w.person(t, "alice"), authRequest(c.ID), oauth.Consent{Agent: "planner", Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	q := u.Query()
	if q.Get("state") != "st-1" || q.Get("iss") != issuer || !strings.HasPrefix(to, redirect+"?") || q.Get("code") == "" {
		t.Fatalf("the redirect %s: want %s with code, state st-1 and iss %s", to, redirect, issuer)
	}
	return c.ID, q.Get("code")
}

func (w *world) exchange(t *testing.T, clientID, code string) *oauth.IssuedTokens {
	t.Helper()
	tok, err := w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: clientID, Code: code,
		RedirectURI: redirect, CodeVerifier: verifier, Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestOAuthCodeFlow: a registered client, authorized with fewer scopes than
// it asked for, trades its code for a token that authenticates as the
// chosen agent with only those scopes, for its resource only.
func TestOAuthCodeFlow(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead)
	tok := w.exchange(t, id, code)
	if diff := cmp.Diff([]string{hub.ScopeRead}, tok.Scopes); diff != "" || tok.ExpiresIn != time.Hour || !strings.HasPrefix(tok.RefreshToken, "plr_") {
		t.Fatalf("tokens: %+v %s", tok, diff)
	}
	for _, r := range []string{"/mcp/", "/mcp"} {
		c, err := w.hub.AuthenticateFor(ctx, tok.AccessToken, issuer, r)
		if err != nil {
			t.Fatalf("at %s: %v", r, err)
		}
		if c.Agent.Handle() != "alice/planner" || !cmp.Equal(c.Scopes, []string{hub.ScopeRead}) {
			t.Fatalf("caller %s %v", c.Agent.Handle(), c.Scopes)
		}
	}
	_, err := w.hub.AuthenticateFor(ctx, tok.AccessToken, issuer, "/mcp/inbox/")
	if e := hub.AsError(err); e.Kind != hub.KindUnauthenticated || !strings.Contains(e.Msg, "issued for "+resource) {
		t.Fatalf("a token for another resource: %v", err)
	}
	// The refresh token is never a bearer token.
	if _, err := w.hub.Authenticate(ctx, tok.RefreshToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("the refresh token as a bearer: %v", err)
	}
	// The code is used up; used again, what it gave is revoked.
	_, err = w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: id, Code: code, RedirectURI: redirect, CodeVerifier: verifier})
	oauthCode(t, err, oauth.OAuthInvalidGrant)
	if _, err := w.hub.Authenticate(ctx, tok.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after the code came back: %v", err)
	}
	// OAuth tokens are not listed as static ones.
	if ts, err := w.hub.Tokens(ctx, "alice", "planner"); err != nil || len(ts) != 1 {
		t.Fatalf("static tokens: %v %v", ts, err)
	}
}

// TestOAuthRefusals: each thing a token request or an authorization
// request can get wrong is refused with its RFC 6749 code.
func TestOAuthRefusals(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead, hub.ScopeWrite)
	good := oauth.TokenRequest{GrantType: "authorization_code", ClientID: id, Code: code, RedirectURI: redirect, CodeVerifier: verifier, Resource: resource}
	other, _ := w.auth.RegisterClient(ctx, oauth.ClientSpec{RedirectURIs: []string{redirect}})
	for _, tc := range []struct {
		name string
		edit func(*oauth.TokenRequest)
		code string
	}{
		{"wrong verifier", func(r *oauth.TokenRequest) { r.CodeVerifier = strings.Replace(verifier, "a", "b", 1) }, oauth.OAuthInvalidGrant},
		{"short verifier", func(r *oauth.TokenRequest) { r.CodeVerifier = "short" }, oauth.OAuthInvalidGrant},
		{"another redirect", func(r *oauth.TokenRequest) { r.RedirectURI = redirect + "x" }, oauth.OAuthInvalidGrant},
		{"another client", func(r *oauth.TokenRequest) { r.ClientID = other.ID }, oauth.OAuthInvalidGrant},
		{"another resource", func(r *oauth.TokenRequest) { r.Resource = "https://palaver.example/mcp/inbox/" }, oauth.OAuthInvalidTarget},
		{"no client", func(r *oauth.TokenRequest) { r.ClientID = "" }, oauth.OAuthInvalidRequest},
		{"unknown code", func(r *oauth.TokenRequest) { r.Code = "plc_nope" }, oauth.OAuthInvalidGrant},
		{"grant type", func(r *oauth.TokenRequest) { r.GrantType = "password" }, oauth.OAuthUnsupportedGrant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.edit(&r)
			_, err := w.auth.ExchangeToken(ctx, r)
			oauthCode(t, err, tc.code)
		})
	}
	// None of those used the code up.
	w.exchange(t, id, code)

	// An expired code.
	id, code = w.authorize(t, hub.ScopeRead)
	w.clock.Advance(oauth.CodeLifetime)
	_, err := w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: id, Code: code, RedirectURI: redirect, CodeVerifier: verifier})
	oauthCode(t, err, oauth.OAuthInvalidGrant)

	// The authorization request: a redirect URI a character off is told to
	// the person only; a loopback one may name any port.
	for _, tc := range []struct {
		name     string
		edit     func(*oauth.AuthRequest)
		code     string
		redirect bool // the client is told, by its redirect URI
	}{
		{"redirect a character off", func(r *oauth.AuthRequest) { r.RedirectURI = "http://127.0.0.1:5555/callbacc" }, oauth.OAuthInvalidRequest, false},
		{"unknown client", func(r *oauth.AuthRequest) { r.ClientID = "cli_nope" }, oauth.OAuthInvalidClient, false},
		{"plain PKCE", func(r *oauth.AuthRequest) { r.CodeChallengeMethod = "plain" }, oauth.OAuthInvalidRequest, true},
		{"no PKCE", func(r *oauth.AuthRequest) { r.CodeChallenge, r.CodeChallengeMethod = "", "" }, oauth.OAuthInvalidRequest, true},
		{"token response", func(r *oauth.AuthRequest) { r.ResponseType = "token" }, oauth.OAuthUnsupportedResponse, true},
		{"another resource", func(r *oauth.AuthRequest) { r.Resource = "https://elsewhere.example/mcp/" }, oauth.OAuthInvalidTarget, true},
		{"unknown scopes", func(r *oauth.AuthRequest) { r.Scope = "admin root" }, oauth.OAuthInvalidScope, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := authRequest(id)
			tc.edit(&r)
			a, err := w.auth.CheckAuthorization(ctx, r)
			oauthCode(t, err, tc.code)
			if (a != nil) != tc.redirect {
				t.Fatalf("redirect to the client: %v, want %v", a != nil, tc.redirect)
			}
			if a != nil {
				u, _ := url.Parse(a.ErrorRedirect(err))
				if q := u.Query(); q.Get("error") != tc.code || q.Get("state") != "st-1" || q.Get("iss") != issuer {
					t.Fatalf("error redirect %s", u)
				}
			}
		})
	}
	r := authRequest(id)
	r.RedirectURI = "http://127.0.0.1:61234/callback"
	r.Scope, r.Resource = "msg:read offline_access", ""
	a, err := w.auth.CheckAuthorization(ctx, r)
	if err != nil || a.Resource != resource || !cmp.Equal(a.Scopes, []string{hub.ScopeRead}) {
		t.Fatalf("loopback on another port, default resource, unknown scope ignored: %+v %v", a, err)
	}
	// Consent to a scope not asked for, or to another's agent.
	if _, err := w.auth.Authorize(ctx, w.person(t, "alice"), r, oauth.Consent{Agent: "planner", Scopes: []string{hub.ScopeWrite}}); hub.AsError(err).Kind != hub.KindInvalid {
		t.Fatalf("a scope not asked for: %v", err)
	}
	if _, err := w.auth.Authorize(ctx, w.person(t, "alice"), r, oauth.Consent{Agent: "bob/helper", Scopes: []string{hub.ScopeRead}}); hub.AsError(err).Kind != hub.KindNotFound {
		t.Fatalf("bob's agent: %v", err)
	}
	// Registering: redirect URIs are https or loopback http.
	for _, bad := range []string{"http://palaver.example/cb", "https://x.example/cb#frag", "myapp:/cb", "https://user@x.example/cb"} {
		_, err := w.auth.RegisterClient(ctx, oauth.ClientSpec{RedirectURIs: []string{bad}})
		oauthCode(t, err, oauth.OAuthInvalidRedirectURI)
	}
}

// TestOAuthExpiryAndRotation: an access token stops after an hour; a
// refresh rotates, and the old refresh token sent again once its grace
// is over revokes every token of the grant.
func TestOAuthExpiryAndRotation(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead)
	first := w.exchange(t, id, code)
	w.clock.Advance(time.Hour)
	_, err := w.hub.Authenticate(ctx, first.AccessToken)
	if e := hub.AsError(err); e.Kind != hub.KindUnauthenticated || !strings.Contains(e.Msg, "expired") {
		t.Fatalf("an hour on: %v", err)
	}
	second, err := w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: id, RefreshToken: first.RefreshToken})
	if err != nil {
		t.Fatal(err)
	}
	if second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken {
		t.Fatal("a refresh gave the same tokens")
	}
	if _, err := w.hub.Authenticate(ctx, second.AccessToken); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(oauth.RefreshGrace)
	_, err = w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: id, RefreshToken: first.RefreshToken})
	oauthCode(t, err, oauth.OAuthInvalidGrant)
	if _, err := w.hub.Authenticate(ctx, second.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after the old refresh token came back, the new access token: %v", err)
	}
	_, err = w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: id, RefreshToken: second.RefreshToken})
	oauthCode(t, err, oauth.OAuthInvalidGrant)
}

// TestOAuthRevocation: revoking a client on the agent's page ends its
// tokens at once; RFC 7009 revocation of a refresh token ends its grant.
func TestOAuthRevocation(t *testing.T) {
	w := newWorld(t)
	alice := w.person(t, "alice")
	id, code := w.authorize(t, hub.ScopeRead)
	tok := w.exchange(t, id, code)
	if _, err := w.hub.Authenticate(ctx, tok.AccessToken); err != nil {
		t.Fatal(err)
	}
	cs, err := w.auth.AgentClients(ctx, alice, "planner")
	if err != nil || len(cs) != 1 || cs[0].Name != "Test client" || cs[0].RedirectURI != redirect || !cmp.Equal(cs[0].Scopes, []string{hub.ScopeRead}) || cs[0].LastUsedAt.IsZero() {
		t.Fatalf("the planner's clients: %+v %v", cs, err)
	}
	if _, err := w.auth.RevokeAgentClient(ctx, alice, "planner", id); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.Authenticate(ctx, tok.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after revoking the client: %v", err)
	}
	if cs, _ := w.auth.AgentClients(ctx, alice, "planner"); len(cs) != 0 {
		t.Fatalf("still listed: %+v", cs)
	}
	_, err = w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: id, RefreshToken: tok.RefreshToken})
	oauthCode(t, err, oauth.OAuthInvalidGrant)

	id, code = w.authorize(t, hub.ScopeRead)
	tok = w.exchange(t, id, code)
	if err := w.auth.RevokeOAuthToken(ctx, "cli_someone_else", tok.RefreshToken); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.Authenticate(ctx, tok.AccessToken); err != nil {
		t.Fatalf("another client's revocation changed something: %v", err)
	}
	if err := w.auth.RevokeOAuthToken(ctx, id, tok.RefreshToken); err != nil {
		t.Fatal(err)
	}
	if _, err := w.hub.Authenticate(ctx, tok.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after revoking the refresh token: %v", err)
	}
}

// fetcher serves client documents from a map, recording what was asked,
// and refuses an address as the real one does at connect time.
type fetcher struct {
	docs    map[string]string
	addr    netip.Addr // the address every host "resolves" to
	fetched []string
}

func (f *fetcher) Fetch(_ context.Context, u string, allow func(netip.Addr) bool, max int64) ([]byte, error) {
	if !allow(f.addr) {
		return nil, errors.New("refusing to connect to " + f.addr.String())
	}
	f.fetched = append(f.fetched, u)
	return []byte(f.docs[u]), nil
}

// TestClientDocuments: a client ID metadata document is fetched, checked
// and kept for an hour; one at a private address is never fetched unless
// the admin let its host through.
func TestClientDocuments(t *testing.T) {
	const docURL = "https://app.example/client.json"
	doc := `{"client_id":"` + docURL + `","client_name":"App","redirect_uris":["` + redirect + `"]}`
	f := &fetcher{docs: map[string]string{docURL: doc}, addr: netip.MustParseAddr("93.184.215.14")}
	w := newWorld(t)
	open := func(private ...string) {
		w.options = func(o *hub.Options, ao *oauth.AuthorityOptions) { o.PrivateHosts, ao.Fetcher = private, f }
		w.reopen(t)
	}
	open()
	a, err := w.auth.CheckAuthorization(ctx, authRequest(docURL))
	if err != nil || a.Client.Label() != "App" || !a.Client.Document {
		t.Fatalf("%+v %v", a, err)
	}
	w.auth.CheckAuthorization(ctx, authRequest(docURL))
	w.clock.Advance(oauth.ClientDocumentTTL)
	w.auth.CheckAuthorization(ctx, authRequest(docURL))
	if diff := cmp.Diff([]string{docURL, docURL}, f.fetched); diff != "" {
		t.Fatalf("fetches (once, then again after an hour): %s", diff)
	}

	for _, tc := range []struct{ name, id, doc string }{
		{"http", "http://app.example/client.json", ""},
		{"no path", "https://app.example", ""},
		{"private literal", "https://10.1.2.3/client.json", ""},
		{"loopback literal", "https://127.0.0.1:8443/client.json", ""},
		{"NAT64 literal", "https://[64:ff9b::a9fe:a9fe]/client.json", ""},
		{"6to4 literal", "https://[2002:a9fe:a9fe::1]/client.json", ""},
		{"IPv4-compatible literal", "https://[::127.0.0.1]/client.json", ""},
		{"benchmarking literal", "https://198.18.0.1/client.json", ""},
		{"reserved literal", "https://240.0.0.1/client.json", ""},
		{"another client_id", "https://app.example/other.json", `{"client_id":"https://app.example/x.json","redirect_uris":["` + redirect + `"]}`},
		{"a secret", "https://app.example/secret.json", `{"client_id":"https://app.example/secret.json","client_secret":"s","redirect_uris":["` + redirect + `"]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.fetched = nil
			f.docs[tc.id] = tc.doc
			a, err := w.auth.CheckAuthorization(ctx, authRequest(tc.id))
			oauthCode(t, err, oauth.OAuthInvalidClient)
			if a != nil {
				t.Fatal("a bad client got a redirect")
			}
			if tc.doc == "" && len(f.fetched) != 0 {
				t.Fatalf("fetched %v", f.fetched)
			}
		})
	}

	// A name that resolves to a private address is refused when connecting.
	f.addr, f.fetched = netip.MustParseAddr("192.168.1.10"), nil
	w.clock.Advance(oauth.ClientDocumentTTL)
	if _, err := w.auth.CheckAuthorization(ctx, authRequest(docURL)); err == nil || len(f.fetched) != 0 {
		t.Fatalf("at a private address: %v, fetched %v", err, f.fetched)
	}
	open("App.example")
	if _, err := w.auth.CheckAuthorization(ctx, authRequest(docURL)); err != nil || len(f.fetched) != 1 {
		t.Fatalf("let through by the admin: %v, fetched %v", err, f.fetched)
	}

	for addr, want := range map[string]bool{
		"93.184.215.14": true, "2606:4700::1": true, "10.0.0.1": false, "172.16.0.1": false, "192.168.0.1": false, "127.0.0.1": false,
		"::1": false, "169.254.169.254": false, "fe80::1": false, "fc00::1": false, "100.64.0.1": false, "0.0.0.0": false,
		"::ffff:127.0.0.1": false, "224.0.0.1": false, "203.0.113.7": false, "2001:db8::1": false, "192.0.0.1": false,
		"::127.0.0.1": false, "64:ff9b::a9fe:a9fe": false, "2002:a00:1::1": false, "2001:0:4136:e378:8000:63bf:80ff:fffe": false,
		"64:ff9b::808:808": true,
	} {
		if got := w.hub.AllowFetch("elsewhere.example", netip.MustParseAddr(addr)); got != want {
			t.Errorf("AllowFetch(%s) = %v, want %v", addr, got, want)
		}
	}
}

// TestRegistrationThrottled: registration needs no account, so one
// address registers ten clients at once and then one a minute (§15);
// another address is not held back by it.
func TestRegistrationThrottled(t *testing.T) {
	w := newWorld(t)
	spec := oauth.ClientSpec{Name: "Test client", RedirectURIs: []string{redirect}, From: "203.0.113.7"}
	for i := range 10 {
		if _, err := w.auth.RegisterClient(ctx, spec); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	_, err := w.auth.RegisterClient(ctx, spec)
	var e *hub.Error
	if !errors.As(err, &e) || e.Code != "throttled" || e.Details["retry_after_s"] != 60 {
		t.Fatalf("the 11th registration from one address: %v, want throttled with retry_after_s 60", err)
	}
	spec.From = "198.51.100.1"
	if _, err := w.auth.RegisterClient(ctx, spec); err != nil {
		t.Fatalf("a registration from another address: %v", err)
	}
}
