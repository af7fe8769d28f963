package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// secretOn is the token or link a page shows once, in its copy box.
func secretOn(t *testing.T, p *page, id string) string {
	t.Helper()
	for _, n := range p.all("input") {
		if attr(n, "id") == id {
			return attr(n, "value")
		}
	}
	t.Fatalf("%s shows no %s: %s", p.path(), id, p.text())
	return ""
}

// TestAgentPages walks an agent's life on its pages: create (a bad name
// refused, nothing made), set mode, mint a token shown once (it works),
// list and revoke it (it stops working), grant a contact, archive (its
// tokens die) and bring it back.
func TestAgentPages(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	p := b.get("/agents")
	if p = b.submit(p, "/agents", url.Values{"slug": {"Bad Name!"}, "description": {"x"}}); p.path() != "/agents" || p.errorText() == "" {
		t.Fatalf("a bad name: at %s, error %q", p.path(), p.errorText())
	}
	if p = b.post("/agents", url.Values{"slug": {"big"}, "description": {strings.Repeat("x", 2<<20)}}); p.path() != "/agents" || !strings.Contains(p.errorText(), "over 1024 KiB") {
		t.Fatalf("a 2 MiB form: at %s, error %q", p.path(), p.errorText())
	}
	if as, _ := s.hub.Agents(ctx, "alice", true); len(as) != 0 {
		t.Fatalf("a refused create made %d agents", len(as))
	}
	p = b.submit(p, "/agents", url.Values{"slug": {"planner"}, "description": {"Plans the release"}, "goal": {"ship 2.0"}})
	if p.path() != "/agents/planner" || !strings.Contains(p.notice(), "Created alice/planner") {
		t.Fatalf("create: at %s, %q %q", p.path(), p.notice(), p.errorText())
	}

	p = b.submit(p, "/agents/planner/mode", url.Values{"mode": {"review"}})
	if a, _ := s.hub.Agent(ctx, "alice/planner"); a.Mode != hub.ModeReview || !strings.Contains(p.notice(), "review mode") {
		t.Fatalf("set mode: %s, %q", a.Mode, p.notice())
	}
	if p = b.submit(p, "/agents/planner/mode", url.Values{"mode": {"shout"}}); p.errorText() == "" {
		t.Fatal("an unknown mode was taken")
	}

	// Mint with two of the three scopes, expiring in 30 days.
	p = b.submit(p, "/agents/planner/tokens", url.Values{"name": {"laptop"}, "scope": {hub.ScopeRead, hub.ScopeWrite}, "expires_in_days": {"30"}})
	secret := secretOn(t, p, "secret")
	if !strings.HasPrefix(secret, "plv_") || !strings.Contains(p.text(), "shown this once") || !strings.Contains(p.text(), "/mcp/") {
		t.Fatalf("the minted token's page: %s", p.text())
	}
	c, err := s.hub.Authenticate(ctx, secret)
	if err != nil || strings.Join(c.Scopes, ",") != "msg:read,msg:write" {
		t.Fatalf("the minted token: %+v, %v", c, err)
	}
	// Reloading the token's page leads back to the agent, never the secret.
	p = b.get("/agents/planner/tokens")
	if p.path() != "/agents/planner" || strings.Contains(p.raw, secret) || !strings.Contains(p.text(), "laptop") || !strings.Contains(p.text(), c.TokenID) {
		t.Fatalf("the token list: shows the secret %v, lists it %v", strings.Contains(p.raw, secret), strings.Contains(p.text(), c.TokenID))
	}
	if p = b.submit(p, "/agents/planner/tokens", url.Values{"scope": nil}); p.errorText() == "" || !strings.Contains(p.errorText(), "at least one scope") {
		t.Fatalf("a token with no scope: %q", p.errorText())
	}
	if p = b.submit(p, "/agents/planner/tokens", url.Values{"expires_in_days": {"soon"}}); !strings.Contains(p.errorText(), "whole number") {
		t.Fatalf("a bad expiry: %q", p.errorText())
	}
	p = b.confirm(b.submit(p, "/agents/planner/tokens/"+c.TokenID+"/revoke", nil), "Revoke the token "+c.TokenID+"?")
	if !strings.Contains(p.notice(), "Revoked") {
		t.Fatalf("revoke: %q %q", p.notice(), p.errorText())
	}
	if _, err := s.hub.Authenticate(ctx, secret); err == nil {
		t.Fatal("a revoked token still works")
	}

	// A grant names a person who exists; bob becomes a contact, and the
	// planner may reach his agents.
	bob := s.person(t, "bob")
	if p = b.submit(p, "/agents/planner/grants", url.Values{"contact": {"nobody"}, "allow_agents": {"1"}}); p.errorText() == "" {
		t.Fatal("a grant to nobody was taken")
	}
	b.submit(b.get("/contacts"), "/contacts", url.Values{"handle": {"bob"}})
	bob.submit(bob.get("/contacts"), "/contacts/alice/approve", nil)
	p = b.submit(b.get("/agents/planner"), "/agents/planner/grants", url.Values{"contact": {"bob"}, "allow_agents": {"1"}})
	if !strings.Contains(p.notice(), "may reach bob's agents") || !strings.Contains(p.text(), "@bob: not the person, their agents") {
		t.Fatalf("the grant: %q, page %s", p.notice()+p.errorText(), p.text())
	}

	// Archive, then bring back: the old token stays dead, a new one works.
	_, old, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner"})
	if err != nil {
		t.Fatal(err)
	}
	p = b.confirm(b.submit(b.get("/agents/planner"), "/agents/planner/archive", nil), "Archive alice/planner?")
	if !strings.Contains(p.text(), "This agent is archived") {
		t.Fatalf("archive: %s", p.text())
	}
	if _, err := s.hub.Authenticate(ctx, old); err == nil {
		t.Fatal("an archived agent's token works")
	}
	if p := b.get("/agents"); !strings.Contains(p.text(), "archived") {
		t.Fatalf("the agent list: %s", p.text())
	}
	p = b.submit(p, "/agents/planner/unarchive", nil)
	if !strings.Contains(p.notice(), "is back") {
		t.Fatalf("unarchive: %q %q", p.notice(), p.errorText())
	}
	p = b.submit(p, "/agents/planner/tokens", nil)
	if _, err := s.hub.Authenticate(ctx, secretOn(t, p, "secret")); err != nil {
		t.Fatalf("a new token after unarchive: %v", err)
	}
	if _, err := s.hub.Authenticate(ctx, old); err == nil {
		t.Fatal("the old token came back with the agent")
	}

	// Another person's agent is not found, on every page and form.
	if p := bob.get("/agents/planner"); p.status != 404 {
		t.Fatalf("bob opens alice's agent: %d", p.status)
	}
}

// TestAgentPublicControl: the agent page makes the agent public and private
// again, with the one line that says what public means; the page and the
// agents list show a public agent's badge; a value the buttons do not send
// is refused, and another person's agent is not found (§1).
func TestAgentPublicControl(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/desk", Description: "answers questions"}); err != nil {
		t.Fatal(err)
	}
	const explained = "Anyone on this server can add a public agent to a conversation and talk to it without a grant."
	badges := func(p *page) int {
		n := 0
		for _, m := range p.all("mark") {
			if strings.Contains(attr(m, "class"), "badge-public") && text(m) == "public" {
				n++
			}
		}
		return n
	}
	p := b.get("/agents/desk")
	if !strings.Contains(p.text(), explained) || badges(p) != 0 {
		t.Fatalf("a private agent's page: badges %d, text %s", badges(p), p.text())
	}
	p = b.submit(p, "/agents/desk/public", nil, "public=1")
	if a, _ := s.hub.Agent(ctx, "alice/desk"); !a.Public || !strings.Contains(p.notice(), "alice/desk is now public") {
		t.Fatalf("make it public: %+v, %q %q", a, p.notice(), p.errorText())
	}
	if p.path() != "/agents/desk" || badges(p) != 1 || !strings.Contains(p.text(), explained) {
		t.Fatalf("the public agent's page: at %s, badges %d", p.path(), badges(p))
	}
	if l := b.get("/agents"); badges(l) != 1 {
		t.Fatalf("the agents list shows %d public badges, want 1: %s", badges(l), l.text())
	}
	p = b.submit(p, "/agents/desk/public", nil, "public=0")
	if a, _ := s.hub.Agent(ctx, "alice/desk"); a.Public || !strings.Contains(p.notice(), "alice/desk is now private") || badges(p) != 0 {
		t.Fatalf("make it private: %+v, %q %q, badges %d", a, p.notice(), p.errorText(), badges(p))
	}
	if l := b.get("/agents"); badges(l) != 0 {
		t.Fatalf("the agents list shows %d public badges, want none", badges(l))
	}
	if p = b.post("/agents/desk/public", url.Values{"public": {"yes"}}); !strings.Contains(p.errorText(), "public is 1") {
		t.Fatalf("public=yes: at %s, error %q", p.path(), p.errorText())
	}
	if a, _ := s.hub.Agent(ctx, "alice/desk"); a.Public {
		t.Fatal("a refused value made the agent public")
	}
	bob := s.person(t, "bob")
	if p := bob.post("/agents/desk/public", url.Values{"public": {"1"}}); p.status != 404 {
		t.Fatalf("bob making alice's agent public: %d %s", p.status, p.text())
	}
	if a, _ := s.hub.Agent(ctx, "alice/desk"); a.Public {
		t.Fatal("bob made alice's agent public")
	}
}

// TestAgentA2AControl: the agent page exposes the agent over A2A with the
// skills written one a line, shows its card's URL, and takes it away
// again; bad skills are refused and change nothing, and another person's
// agent is not found (§18).
func TestAgentA2AControl(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/desk", Description: "answers questions"}); err != nil {
		t.Fatal(err)
	}
	exposed := func() *hub.A2AExposure {
		t.Helper()
		alice, err := s.hub.User(ctx, "alice")
		if err != nil {
			t.Fatal(err)
		}
		ea, err := s.tasks.Exposure(ctx, alice, "desk")
		if err != nil {
			t.Fatal(err)
		}
		return ea.Exposure
	}
	p := b.get("/agents/desk")
	if strings.Contains(p.text(), "/a2a/alice/desk/.well-known/agent-card.json") {
		t.Fatalf("an unexposed agent's page shows a card: %s", p.text())
	}
	p = b.submit(p, "/agents/desk/a2a", url.Values{"exposed": {"1"}, "skills": {"Answer questions: about the hub\nTriage"}})
	if e := exposed(); !e.Exposed || len(e.Skills) != 2 || e.Skills[0].Description != "about the hub" || !strings.Contains(p.notice(), "alice/desk is exposed over A2A, with 2 skills") {
		t.Fatalf("exposing: %+v, %q %q", e, p.notice(), p.errorText())
	}
	if p.path() != "/agents/desk" || !strings.Contains(p.text(), "/a2a/alice/desk/.well-known/agent-card.json") || !strings.Contains(p.text(), "Answer questions: about the hub") {
		t.Fatalf("the exposed agent's page, at %s: %s", p.path(), p.text())
	}
	if p = b.post("/agents/desk/a2a", url.Values{"exposed": {"1"}, "skills": {"!!!"}}); !strings.Contains(p.errorText(), "has no letter or digit") {
		t.Fatalf("a bad skill: at %s, error %q", p.path(), p.errorText())
	}
	if e := exposed(); len(e.Skills) != 2 {
		t.Fatalf("a refused change changed the skills: %+v", e)
	}
	p = b.submit(b.get("/agents/desk"), "/agents/desk/a2a", url.Values{"exposed": {""}})
	if e := exposed(); e.Exposed || !strings.Contains(p.notice(), "alice/desk is not exposed over A2A") {
		t.Fatalf("taking it away: %+v, %q %q", e, p.notice(), p.errorText())
	}
	bob := s.person(t, "bob")
	if p := bob.post("/agents/desk/a2a", url.Values{"exposed": {"1"}}); p.status != 404 {
		t.Fatalf("bob exposing alice's agent: %d %s", p.status, p.text())
	}
}
