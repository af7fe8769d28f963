package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// loopbackNames puts every name on 127.0.0.1.
type loopbackNames struct{}

func (loopbackNames) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// TestRemoteAgentPages: on the agents page an owner adds a remote A2A
// agent by its card's URL (an http one refused), sees it with its card's
// name, provider, description and skills and when the card was read —
// never its credential — and, on the Bridge, its calls; and removes it.
func TestRemoteAgentPages(t *testing.T) {
	card := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"name": "Weather", "description": "forecasts", "version": "1",
			"provider":            map[string]string{"organization": "Example Weather", "url": "https://example.com"},
			"skills":              []map[string]any{{"id": "f", "name": "forecast", "description": "", "tags": []string{}}},
			"supportedInterfaces": []map[string]string{{"url": "https://agent.example.com/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}})
	}))
	defer card.Close()
	u, _ := url.Parse(card.URL)
	cardURL := "https://agent.example.com:" + u.Port() + "/.well-known/agent-card.json"
	roots := card.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ts := servertest.Open(t, servertest.Options{MCP: true, API: true, Web: true, Store: storetest.Open(t), Hub: func(o *hub.Options) {
		o.PrivateHosts = []string{"agent.example.com"}
	}, RemoteClient: a2aclient.New(a2aclient.Options{RootCAs: roots, Resolver: loopbackNames{}})})
	s := &site{url: ts.URL, hub: ts.Hub, projects: ts.Projects, reach: ts.Reach, hooks: ts.Webhooks, notices: ts.Notices, auth: ts.OAuth, accounts: ts.Accounts, stop: ts.Close}
	b := s.person(t, "alice")
	p := b.get("/agents")
	if !strings.Contains(p.text(), "No remote agents.") {
		t.Fatalf("the agents page: %s", p.text())
	}
	if p = b.submit(p, "/remote-agents", url.Values{"slug": {"weather"}, "card_url": {"http://agent.example.com/card"}}); !strings.Contains(p.errorText(), "https") {
		t.Fatalf("an http card: %q", p.errorText())
	}
	p = b.submit(b.get("/agents"), "/remote-agents", url.Values{"slug": {"weather"}, "card_url": {cardURL}, "credential": {"s3cret-token"}})
	if p.path() != "/agents" || !strings.Contains(p.text(), "Added alice/weather (Weather)") || !strings.Contains(p.text(), "alice/weather — Weather (Example Weather)") ||
		!strings.Contains(p.raw, "<br>forecasts<br><small>Skills: forecast</small>") || !strings.Contains(p.text(), "card read just now, again daily") ||
		!strings.Contains(p.text(), "with a credential") || strings.Contains(p.raw, "s3cret-token") {
		t.Fatalf("after adding: at %s: %s", p.path(), p.text())
	}
	if home := b.get("/"); !strings.Contains(home.text(), "Remote calls alice/weather: no message yet") {
		t.Fatalf("the Bridge does not show the remote's calls: %s", home.text())
	}
	p = b.submit(p, "/remote-agents/weather/remove", nil)
	if !strings.Contains(p.text(), "Removed the remote agent alice/weather") || !strings.Contains(p.text(), "No remote agents.") {
		t.Fatalf("after removing: %s", p.text())
	}
}
