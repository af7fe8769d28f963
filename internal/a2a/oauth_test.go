package a2a_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

// oauthToken is an OAuth access token of alice/planner for the resource
// at path, as the authorization server issues it: a registered client,
// alice's consent, the code traded with its PKCE verifier.
func (ts *testServer) oauthToken(t *testing.T, path string) string {
	t.Helper()
	const redirect, verifier = "http://127.0.0.1:5555/callback", "a-verifier-of-forty-three-characters-or-more-0123456789"
	c, err := ts.OAuth.RegisterClient(ctx, oauth.ClientSpec{Name: "A2A client", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(verifier))
	req := oauth.AuthRequest{ResponseType: "code", ClientID: c.ID, RedirectURI: redirect, CodeChallenge: base64.RawURLEncoding.EncodeToString(sum[:]),
		CodeChallengeMethod: "S256", Resource: ts.url + path, Issuer: ts.url,
		Resources: []string{ts.url + "/mcp/", ts.url + "/mcp/inbox/", ts.url + hub.A2AResourcePath}}
	alice, _ := ts.hub.User(ctx, "alice")
	to, err := ts.OAuth.Authorize(ctx, alice, req, oauth.Consent{Agent: "planner", Scopes: hub.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	tok, err := ts.OAuth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "authorization_code", ClientID: c.ID, Code: u.Query().Get("code"),
		RedirectURI: redirect, CodeVerifier: verifier})
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// TestOAuthResource: an OAuth token is used at an agent's A2A endpoint only
// when it was issued for the A2A resource, as at the MCP endpoints — one
// for /mcp/inbox/ gets 401 saying so, with WWW-Authenticate naming the
// A2A resource's metadata; one for the A2A resource is refused at /mcp/.
// A static token has no resource and serves both. The A2A resource's
// metadata names it (RFC 9728).
func TestOAuthResource(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	endpoint := ts.url + "/a2a/alice/reviewer"
	get := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"msg_none"}}`

	inbox := ts.oauthToken(t, "/mcp/inbox/")
	status, h, body := ts.post(t, endpoint, inbox, get)
	if want := "this token was issued for " + ts.url + "/mcp/inbox/, not for " + ts.url + "/a2a/; authorize again for this endpoint"; status != http.StatusUnauthorized || strings.TrimSpace(body) != want {
		t.Errorf("a token for /mcp/inbox/ at A2A: %d %q; want 401 %q", status, body, want)
	}
	if want := `Bearer realm="palaver", resource_metadata="` + ts.url + `/.well-known/oauth-protected-resource/a2a/", error="invalid_token"`; h.Get("WWW-Authenticate") != want {
		t.Errorf("its challenge: %q; want %q", h.Get("WWW-Authenticate"), want)
	}

	for _, tc := range []struct {
		name, token string
		a2a, mcp    int
	}{
		{"an OAuth token for the A2A resource", ts.oauthToken(t, hub.A2AResourcePath), http.StatusOK, http.StatusUnauthorized},
		{"an OAuth token for /mcp/", ts.oauthToken(t, "/mcp/"), http.StatusUnauthorized, http.StatusOK},
		{"a static token", ts.tokens["alice/planner"], http.StatusOK, http.StatusOK},
	} {
		status, _, body := ts.post(t, endpoint, tc.token, get)
		if status != tc.a2a || (status == http.StatusOK && !strings.Contains(body, `"code":-32001`)) {
			t.Errorf("%s at A2A: %d %s; want %d", tc.name, status, body, tc.a2a)
		}
		mcp := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		if status, _, body := ts.post(t, ts.url+"/mcp/", tc.token, mcp); status != tc.mcp {
			t.Errorf("%s at /mcp/: %d %s; want %d", tc.name, status, body, tc.mcp)
		}
	}

	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource/a2a/":               ts.url + "/a2a/",
		"/.well-known/oauth-protected-resource/a2a":                ts.url + "/a2a/",
		"/.well-known/oauth-protected-resource/a2a/alice/reviewer": ts.url + "/a2a/",
	} {
		status, _, body := ts.post(t, ts.url+path, "", "")
		var prm map[string]any
		json.Unmarshal([]byte(body), &prm)
		if status != http.StatusOK || prm["resource"] != resource || !equal(prm["authorization_servers"], []any{ts.url}) {
			t.Errorf("GET %s: %d %s; want the resource %s, its authorization server %s", path, status, body, resource, ts.url)
		}
	}
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// post sends body (GET when it is empty) with an optional token, with the
// headers an MCP client sends, and returns the answer.
func (ts *testServer) post(t *testing.T, u, token, body string) (int, http.Header, string) {
	t.Helper()
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
