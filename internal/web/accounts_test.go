package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestFirstRunSetup: with nobody yet every page leads to setup; a weak
// password is refused with the handle kept; the first account is the
// admin, signed in with an HttpOnly, SameSite=Lax cookie; then setup is
// closed.
func TestFirstRunSetup(t *testing.T) {
	s := newSite(t)
	b := s.browser(t)
	p := b.get("/approvals")
	if p.path() != "/setup" || !strings.Contains(p.text(), "Nobody has an account here yet") {
		t.Fatalf("a new server: at %s: %s", p.path(), p.text())
	}
	p = b.submit(p, "/setup", url.Values{"handle": {"alice"}, "name": {"Alice"}, "password": {"short"}})
	if p.status != http.StatusBadRequest || !strings.Contains(p.errorText(), "at least 10 characters") || attr(findInput(t, p, "handle"), "value") != "alice" {
		t.Fatalf("a weak password: %d %q, handle kept %q", p.status, p.errorText(), attr(findInput(t, p, "handle"), "value"))
	}
	if need, _ := s.accounts.NeedsSetup(ctx); !need {
		t.Fatal("a refused setup made an account")
	}
	p = b.submit(p, "/setup", url.Values{"handle": {"alice"}, "name": {"Alice"}, "password": {"correct horse battery"}})
	if p.status != 200 || p.path() != "/agents" || !strings.Contains(p.notice(), "Welcome") {
		t.Fatalf("setup: %d at %s, notice %q", p.status, p.path(), p.notice())
	}
	var cookie *http.Cookie
	for _, c := range b.last.Request.Response.Cookies() {
		if c.Name == "palaver" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure || cookie.MaxAge <= 0 {
		t.Fatalf("the sign-in cookie: %+v", cookie)
	}
	u, err := s.hub.User(ctx, "alice")
	if err != nil || !u.Admin {
		t.Fatalf("alice: %+v, %v; want the admin", u, err)
	}
	if p := s.browser(t).get("/setup"); p.path() != "/signin" {
		t.Fatalf("setup once set up: at %s", p.path())
	}
	// Posting setup again anyway changes nothing.
	other := s.browser(t)
	p = other.get("/signin")
	p.form("/signin")
	if p := other.post("/setup", url.Values{"handle": {"mallory"}, "password": {"correct horse battery"}}); p.status != http.StatusForbidden || !strings.Contains(p.errorText(), "set up already") {
		t.Fatalf("a second setup: %d %q", p.status, p.errorText())
	}
	if us, _ := s.hub.Users(ctx, nil); len(us) != 1 {
		t.Fatalf("people after a second setup: %d", len(us))
	}
}

// findInput is the page's input with this name.
func findInput(t *testing.T, p *page, name string) *html.Node {
	t.Helper()
	for _, n := range p.all("input") {
		if attr(n, "name") == name {
			return n
		}
	}
	t.Fatalf("%s has no input %q", p.path(), name)
	return nil
}

// TestSignInAndOut: a page asked for while signed out is where sign-in
// lands; a wrong password says so and keeps the handle; signing in again
// rotates the cookie (the old one is dead); signing out ends it.
func TestSignInAndOut(t *testing.T) {
	s := newSite(t)
	s.person(t, "alice")
	b := s.browser(t)
	p := b.get("/contacts")
	if p.path() != "/signin" || p.url.Query().Get("next") != "/contacts" {
		t.Fatalf("signed out: at %s", p.url)
	}
	p = b.submit(p, "/signin", url.Values{"handle": {"alice"}, "password": {"not the password"}})
	if p.status != http.StatusUnauthorized || !strings.Contains(p.errorText(), "do not match") || attr(findInput(t, p, "handle"), "value") != "alice" {
		t.Fatalf("a wrong password: %d %q", p.status, p.errorText())
	}
	p = b.submit(p, "/signin", url.Values{"password": {"correct horse battery"}})
	if p.status != 200 || p.path() != "/contacts" {
		t.Fatalf("signed in: %d at %s: %s", p.status, p.path(), p.errorText())
	}
	first := b.cookie("palaver")
	p = b.get("/signin")
	if p.path() != "/" {
		t.Fatalf("the sign-in page when signed in: at %s", p.path())
	}
	// Sign in again from the same browser (a second tab's form).
	b.post("/signin", url.Values{"handle": {"alice"}, "password": {"correct horse battery"}})
	second := b.cookie("palaver")
	if second == "" || second == first {
		t.Fatal("signing in again did not rotate the cookie")
	}
	if _, err := s.accounts.SignedIn(ctx, first); err == nil {
		t.Fatal("the sign-in before rotation still works")
	}
	p = b.submit(b.get("/"), "/signout", nil)
	if p.path() != "/signin" || !strings.Contains(p.notice(), "Signed out") {
		t.Fatalf("sign out: at %s, %q", p.path(), p.notice())
	}
	if _, err := s.accounts.SignedIn(ctx, second); err == nil {
		t.Fatal("the sign-in outlived signing out")
	}
	if p := b.get("/agents"); p.path() != "/signin" {
		t.Fatalf("after signing out: at %s", p.path())
	}
}

func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.s.url)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// TestSignInThrottled: after five wrong passwords the right one is
// refused too, with 429 and Retry-After, and nobody is signed in.
func TestSignInThrottled(t *testing.T) {
	s := newSite(t)
	s.person(t, "alice")
	b := s.browser(t)
	p := b.get("/signin")
	for i := range 5 { // the right sign-in above cost nothing
		if p = b.submit(p, "/signin", url.Values{"handle": {"alice"}, "password": {"guess"}}); p.status != http.StatusUnauthorized {
			t.Fatalf("wrong attempt %d: %d %q", i+1, p.status, p.errorText())
		}
	}
	p = b.submit(p, "/signin", url.Values{"handle": {"alice"}, "password": {"correct horse battery"}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || !strings.Contains(p.errorText(), "too many sign-in attempts") {
		t.Fatalf("after five attempts: %d, Retry-After %q, %q", p.status, p.header.Get("Retry-After"), p.errorText())
	}
	if b.cookie("palaver") != "" {
		t.Fatal("a throttled sign-in set a cookie")
	}
}

// TestCrossOriginPostRefused: a form posted from another site is refused
// with 403 and changes nothing, even with the person's cookie.
func TestCrossOriginPostRefused(t *testing.T) {
	s := newSite(t)
	b := s.person(t, "alice")
	req := newPost(s.url+"/agents", url.Values{"slug": {"evil"}, "description": {"made elsewhere"}})
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	p := b.do(req)
	if p.status != http.StatusForbidden || !strings.Contains(p.errorText(), "another site") {
		t.Fatalf("a cross-origin post: %d %q", p.status, p.errorText())
	}
	if as, _ := s.hub.Agents(ctx, "alice", true); len(as) != 0 {
		t.Fatalf("a cross-origin post made %d agents", len(as))
	}
}

// TestSignUpByInvitation: invitation only by default; the admin's link
// (made on the settings page) makes one account; open sign-up, set there
// too, needs none; a person who is not the admin can change neither.
func TestSignUpByInvitation(t *testing.T) {
	s := newSite(t)
	admin := s.person(t, "alice")
	b := s.browser(t)
	p := b.get("/signup")
	if !strings.Contains(p.text(), "invitation only") {
		t.Fatalf("sign-up without a link: %s", p.text())
	}
	p = b.post("/signup", url.Values{"handle": {"bob"}, "password": {"correct horse battery"}})
	if p.status != http.StatusForbidden || !strings.Contains(p.errorText(), "invitation") {
		t.Fatalf("sign-up without an invitation: %d %q", p.status, p.errorText())
	}
	p = admin.submit(admin.get("/settings"), "/settings/invites", nil)
	var link string
	for _, n := range p.all("input") {
		if attr(n, "id") == "link" {
			link = attr(n, "value")
		}
	}
	u, err := url.Parse(link)
	if err != nil || u.Path != "/signup" || u.Query().Get("invite") == "" {
		t.Fatalf("the invitation link %q", link)
	}
	p = b.get(u.RequestURI())
	p = b.submit(p, "/signup", url.Values{"handle": {"bob"}, "name": {"Bob"}, "password": {"correct horse battery"}})
	if p.status != 200 || p.path() != "/" || !strings.Contains(p.notice(), "Welcome") {
		t.Fatalf("sign-up with the link: %d at %s %q", p.status, p.path(), p.errorText())
	}
	carol := s.browser(t)
	if p = carol.get(u.RequestURI()); !strings.Contains(p.text(), "not known, used, or expired") || len(p.actions()) != 0 {
		t.Fatalf("the link once used: %s, forms %v", p.text(), p.actions())
	}
	if p = carol.post("/signup", url.Values{"handle": {"carol"}, "invite": {u.Query().Get("invite")}, "password": {"correct horse battery"}}); p.status != http.StatusForbidden {
		t.Fatalf("the link used twice: %d %q", p.status, p.errorText())
	}
	// bob is no admin: no sign-up setting for him, and posting it anyway
	// is refused.
	p = b.get("/settings")
	if strings.Contains(p.text(), "How people join") {
		t.Fatal("bob sees the admin's settings")
	}
	if p := b.post("/settings/signup", url.Values{"mode": {"open"}}); p.path() != "/settings" || !strings.Contains(p.errorText(), "only the admin") {
		t.Fatalf("bob opens sign-up: at %s %q", p.path(), p.errorText())
	}
	p = admin.submit(admin.get("/settings"), "/settings/signup", url.Values{"mode": {"open"}})
	if !strings.Contains(p.notice(), "open") {
		t.Fatalf("opening sign-up: %q %q", p.notice(), p.errorText())
	}
	p = carol.submit(carol.get("/signup"), "/signup", url.Values{"handle": {"carol"}, "password": {"correct horse battery"}})
	if p.status != 200 || p.path() != "/" {
		t.Fatalf("open sign-up: %d at %s %q", p.status, p.path(), p.errorText())
	}
	p = admin.get("/settings")
	for _, who := range []string{"@alice", "@bob", "@carol"} {
		if !strings.Contains(p.text(), who) {
			t.Fatalf("the admin's list of people lacks %s: %s", who, p.text())
		}
	}
}

// TestOnlyOwnHostAndPaths: a request naming another host (a page on a
// name that resolves here) is refused and makes no account; after sign-in
// only a path on this site is followed; form fields come from the form,
// never the address.
func TestOnlyOwnHostAndPaths(t *testing.T) {
	s := newSite(t)
	b := s.browser(t)
	req := newPost(s.url+"/setup", url.Values{"handle": {"mallory"}, "password": {"correct horse battery"}})
	req.Host = "attacker.example"
	req.Header.Set("Origin", "http://attacker.example")
	if p := b.do(req); p.status != http.StatusForbidden || !strings.Contains(p.errorText(), "not served as") {
		t.Fatalf("setup through another host name: %d %q", p.status, p.errorText())
	}
	if need, _ := s.accounts.NeedsSetup(ctx); !need {
		t.Fatal("setup through another host name made an account")
	}
	s.person(t, "alice")
	for _, next := range []string{"//evil.example", "/\\evil.example", "/\t/evil.example", "/\x00x", "https:evil.example", "/ok/../..//evil.example"} {
		c := s.browser(t)
		p := c.post("/signin", url.Values{"handle": {"alice"}, "password": {"correct horse battery"}, "next": {next}})
		if p.url.Host != strings.TrimPrefix(s.url, "http://") {
			t.Fatalf("next=%q led to %s", next, p.url)
		}
	}
	a := s.person(t, "bob")
	p := a.post("/agents?slug=fromquery&description=x", url.Values{})
	if as, _ := s.hub.Agents(ctx, "bob", true); len(as) != 0 || p.errorText() == "" {
		t.Fatalf("fields from the query string made %d agents (%q)", len(as), p.errorText())
	}
}
