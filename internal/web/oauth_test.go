package web_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/servertest"
)

// newOAuthSite is the whole server as serve mounts it, OAuth included,
// on a clock the test moves; client documents are fetched trusting roots,
// at private addresses only for the hosts in private (as an admin's
// --allow-private-host would).
func newOAuthSite(t *testing.T, clk hub.Clock, roots *x509.CertPool, private ...string) *site {
	t.Helper()
	s := servertest.Open(t, servertest.Options{MCP: true, API: true, OAuth: true, Web: true, Fetcher: &oauth.Fetcher{RootCAs: roots}, Hub: func(o *hub.Options) {
		o.Clock, o.PrivateHosts = clk, private
	}})
	return &site{url: s.URL, hub: s.Hub, notices: s.Notices, projects: s.Projects, reach: s.Reach, auth: s.OAuth, accounts: s.Accounts, stop: s.Close}
}

// callback is the client's redirect URI: it hands each authorization
// response it gets to the waiting fetcher.
type callback struct {
	url string
	got chan url.Values
}

func newCallback(t *testing.T) *callback {
	c := &callback{got: make(chan url.Values, 1)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.got <- r.URL.Query()
		w.Write([]byte("<!doctype html><title>done</title><p id=done>You may close this tab.</p>"))
	}))
	t.Cleanup(hs.Close)
	c.url = hs.URL + "/callback"
	return c
}

// consentInBrowser is an AuthorizationCodeFetcher that opens the
// authorization URL in Chromium: it signs alice in, picks the agent,
// leaves only the scopes keep ticked, and allows.
func consentInBrowser(t *testing.T, b *tab, cb *callback, agent string, keep ...string) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		b.do(chromedp.Navigate(args.URL), b.at("signin"))
		b.do(chromedp.SendKeys(chromedp.CSS(`input[name=handle]`), "alice"),
			chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "correct horse battery"),
			chromedp.Click(chromedp.CSS(`form[action="/signin"] button`)),
			b.at("consent"))
		b.screenshot("consent")
		b.do(chromedp.Click(chromedp.CSS(`input[name=agent][value="` + agent + `"]`)))
		for _, s := range hub.AllScopes {
			if !contains(keep, s) {
				b.do(chromedp.Click(chromedp.CSS(`input[name=grant][value="` + s + `"]`)))
			}
		}
		b.do(chromedp.Click(chromedp.CSS(`button[value=allow]`)), chromedp.WaitVisible(chromedp.ID("done")))
		select {
		case q := <-cb.got:
			if e := q.Get("error"); e != "" {
				return nil, errors.New(e + ": " + q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		case <-time.After(20 * time.Second):
			return nil, errors.New("no authorization response came back")
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestBrowserOAuth is the whole OAuth flow with the MCP SDK's own OAuth
// client and real Chromium: from a bare 401 the client discovers the
// server, registers (by dynamic registration, and by a client ID metadata
// document the test serves over TLS at a loopback address the admin
// setting lets through), alice signs in on the consent page, picks an
// agent and narrows the scopes, the client exchanges the code and calls
// whoami as that agent with only those scopes. Then its access token
// expires (the hub's clock), and revoking the client on the agent's page
// turns its next call into a 401. With JavaScript on and off.
func TestBrowserOAuth(t *testing.T) {
	chromium(t)
	for _, tc := range []struct {
		how string
		js  bool
	}{{"registration", true}, {"document", true}, {"registration", false}, {"document", false}} {
		how := tc.how
		t.Run(how+map[bool]string{true: "", false: "/no-javascript"}[tc.js], func(t *testing.T) {
			cb := newCallback(t)
			doc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"client_id": "https://" + r.Host + r.URL.Path, "client_name": "Document client",
					"redirect_uris": []string{cb.url}, "grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
			}))
			t.Cleanup(doc.Close)
			roots := x509.NewCertPool()
			roots.AddCert(doc.Certificate())
			clk := hubtest.LiveClock()
			s := newOAuthSite(t, clk, roots, "127.0.0.1")
			if _, err := s.hub.CreateUser(ctx, "alice", "Alice"); err != nil {
				t.Fatal(err)
			}
			s.accounts.SetPassword(ctx, "alice", "correct horse battery")
			for _, slug := range []string{"planner", "reviewer"} {
				if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug, Description: "the " + slug}); err != nil {
					t.Fatal(err)
				}
			}
			b := newTab(t, s, tc.js)
			b.shot += "oauth-" + how + "-"

			cfg := &auth.AuthorizationCodeHandlerConfig{
				RedirectURL:              cb.url,
				AuthorizationCodeFetcher: consentInBrowser(t, b, cb, "reviewer", hub.ScopeRead),
			}
			name := "Registered client"
			if how == "document" {
				cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: doc.URL + "/client.json"}
				name = "Document client"
			} else {
				cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
					ClientName: name, RedirectURIs: []string{cb.url}, GrantTypes: []string{"authorization_code", "refresh_token"}}}
			}
			handler, err := auth.NewAuthorizationCodeHandler(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp/", OAuthHandler: handler, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			me := call(t, cs, "whoami", nil)
			agent, _ := me["agent"].(map[string]any)
			if got := agent["handle"]; got != "alice/reviewer" || !equalJSON(me["scopes"], []string{hub.ScopeRead}) {
				t.Fatalf("whoami: %v, scopes %v; want alice/reviewer with msg:read only", me["agent"], me["scopes"])
			}
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_conversation", Arguments: map[string]any{"handles": []string{"alice/planner"}}})
			if err != nil || !r.IsError || !strings.Contains(textOf(r), "msg:write") {
				t.Fatalf("a msg:write tool with msg:read only: %v %v", textOf(r), err)
			}

			ts, err := handler.TokenSource(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := ts.Token()
			if err != nil {
				t.Fatal(err)
			}
			// The agent's page lists the client.
			b.open("/agents/reviewer", "agent")
			b.waitText(byID("oauth-clients"), name)
			b.waitText(byID("oauth-clients"), cb.url)
			b.screenshot("agent-clients")

			// An hour on, the access token is refused with a challenge.
			clk.Advance(oauth.AccessTokenLifetime)
			status, challenge := whoamiWith(t, s, tok.AccessToken)
			if status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+s.url+`/.well-known/oauth-protected-resource/mcp/"`) {
				t.Fatalf("an expired access token: %d %q", status, challenge)
			}
			clk.Advance(-oauth.AccessTokenLifetime)
			if status, _ := whoamiWith(t, s, tok.AccessToken); status != http.StatusOK {
				t.Fatalf("before it expires: %d", status)
			}
			// Revoked on the agent's page: the next call is 401.
			b.do(chromedp.Click(chromedp.CSS(`#oauth-clients form button`)))
			b.waitText(notice, "Revoked "+name)
			if status, challenge := whoamiWith(t, s, tok.AccessToken); status != http.StatusUnauthorized || challenge == "" {
				t.Fatalf("after revoking the client: %d %q", status, challenge)
			}
		})
	}
}

// TestConsentNamesTheResource: the consent page says which resource the
// client's tokens will be for — an MCP endpoint, the A2A endpoints, or
// the whole server — and that they work only there.
func TestConsentNamesTheResource(t *testing.T) {
	s := newOAuthSite(t, hubtest.LiveClock(), nil)
	b := s.person(t, "alice")
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/planner"}); err != nil {
		t.Fatal(err)
	}
	const redirect = "http://127.0.0.1:33418/callback"
	c, err := s.auth.RegisterClient(ctx, oauth.ClientSpec{Name: "A client", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	for resource, says := range map[string]string{
		s.url + "/a2a/":       "for the A2A endpoints of the agents here, " + s.url + "/a2a/",
		s.url + "/mcp/":       "for the MCP endpoint, " + s.url + "/mcp/",
		s.url + "/mcp/inbox/": "for the MCP endpoint, " + s.url + "/mcp/inbox/",
		s.url + "/":           "for every endpoint of this server, MCP and A2A, " + s.url + "/",
	} {
		q := url.Values{"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {redirect},
			"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "resource": {resource}}
		p := b.get("/consent?" + q.Encode())
		if p.status != http.StatusOK || !strings.Contains(p.text(), says) || !strings.Contains(p.text(), "Its tokens work only there") {
			t.Errorf("the consent page for %s: %d %q; want it to say %q", resource, p.status, p.text(), says)
		}
	}
}

// TestUnknownWellKnown: a well-known path the server does not serve is
// 404 — what discovery falls back on — never the dashboard's redirect to
// sign in; the served ones answer.
func TestUnknownWellKnown(t *testing.T) {
	s := newOAuthSite(t, hubtest.LiveClock(), nil)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]int{
		"/.well-known/oauth-authorization-server/mcp": http.StatusNotFound,
		"/.well-known/openid-configuration/mcp":       http.StatusNotFound,
		"/.well-known/oauth-protected-resource/other": http.StatusNotFound,
		"/.well-known/security.txt":                   http.StatusNotFound,
		"/.well-known/":                               http.StatusNotFound,
		"/.well-known/oauth-authorization-server":     http.StatusOK,
		"/.well-known/openid-configuration":           http.StatusOK,
		"/.well-known/oauth-protected-resource":       http.StatusOK,
		"/.well-known/oauth-protected-resource/mcp/":  http.StatusOK,
	} {
		resp, err := noRedirect.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d to %q; want %d", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// whoamiWith calls whoami over plain HTTP with a bearer token and returns
// the status and the WWW-Authenticate challenge.
func whoamiWith(t *testing.T, s *site, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp/", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

func equalJSON(got any, want []string) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

func textOf(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var out []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, " ")
}
