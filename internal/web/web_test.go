package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/webhook"
)

var ctx = context.Background()

// site is the whole server — dashboard, REST and MCP — on a temp database.
type site struct {
	url      string
	hub      *hub.Hub
	store    hub.Store
	hooks    *webhook.Hooks
	notices  *push.Notices
	tasks    *tasks.Tasks
	projects *projects.Projects
	reach    *reach.Reach
	auth     *oauth.Authority
	pages    *overview.Overview
	accounts *accounts.Accounts
	// stop ends the server and its hub (a site's cleanup does it too).
	stop func()
}

func newSite(t *testing.T) *site {
	t.Helper()
	return serveSite(t, storetest.Open(t), nil)
}

// serveSite serves the whole server over db, on ln (nil: a new address).
func serveSite(t *testing.T, db hub.Store, ln net.Listener) *site {
	t.Helper()
	s := servertest.Open(t, servertest.Options{MCP: true, API: true, Web: true, Store: db, Listener: ln})
	return &site{url: s.URL, hub: s.Hub, store: s.Store, hooks: s.Webhooks, notices: s.Notices, tasks: s.A2A, projects: s.Projects, reach: s.Reach, auth: s.OAuth, pages: s.Overview, accounts: s.Accounts, stop: s.Close}
}

// person makes an account with a password on the command line's path
// and signs them in in a browser of their own.
func (s *site) person(t *testing.T, handle string) *browser {
	t.Helper()
	if _, err := s.hub.CreateUser(ctx, handle, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.accounts.SetPassword(ctx, handle, "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	b := s.browser(t)
	p := b.get("/signin")
	if p = b.submit(p, "/signin", url.Values{"handle": {handle}, "password": {"correct horse battery"}}); p.status != 200 || p.path() != "/" {
		t.Fatalf("%s signing in: %d at %s: %s", handle, p.status, p.path(), p.errorText())
	}
	return b
}

// browser is one person's browser: cookies, redirects followed.
type browser struct {
	t    *testing.T
	s    *site
	c    *http.Client
	last *http.Response
}

func (s *site) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, s: s, c: &http.Client{Jar: jar}}
}

// page is a response parsed as HTML.
type page struct {
	t      *testing.T
	status int
	url    *url.URL
	header http.Header
	doc    *html.Node
	raw    string
}

func (p *page) path() string { return p.url.Path }

func (b *browser) do(req *http.Request) *page {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	doc, err := html.Parse(strings.NewReader(string(raw)))
	if err != nil {
		b.t.Fatalf("%s: not HTML: %v", req.URL, err)
	}
	b.last = resp
	return &page{t: b.t, status: resp.StatusCode, url: resp.Request.URL, header: resp.Header, doc: doc, raw: string(raw)}
}

func (b *browser) get(path string) *page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.s.url+path, nil)
	return b.do(req)
}

// submit fills the page's form with this action as a browser would —
// each field with its value, checked boxes, the textarea's text, the
// selected option — sets the given fields (each must be on the form),
// and posts it. button, when given, is the name=value of the submit
// button pressed.
func (b *browser) submit(p *page, action string, set url.Values, button ...string) *page {
	b.t.Helper()
	f := p.form(action)
	values := url.Values{}
	for _, in := range f.fields {
		if in.name != "" {
			values.Add(in.name, in.value)
		}
	}
	for name, vs := range set {
		if !slices.ContainsFunc(f.all, func(n string) bool { return n == name }) {
			b.t.Fatalf("the form %s on %s has no field %q (it has %v)", action, p.path(), name, f.all)
		}
		values[name] = vs
	}
	for _, bt := range button {
		name, value, _ := strings.Cut(bt, "=")
		if !slices.Contains(f.buttons, bt) {
			b.t.Fatalf("the form %s has no button %s (it has %v)", action, bt, f.buttons)
		}
		values.Set(name, value)
	}
	req := newPost(p.url.ResolveReference(&url.URL{Path: action}).String(), values)
	req.Header.Set("Origin", b.s.url) // what a browser sends from our own page
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

// newPost is a form's POST request.
func newPost(u string, v url.Values) *http.Request {
	req, _ := http.NewRequest("POST", u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// form is a parsed <form>: its fields as a browser would send them, every
// field name, and its named submit buttons.
type form struct {
	fields  []field
	all     []string
	buttons []string
}

type field struct{ name, value string }

// form finds the POST form with this action; a page without it fails the
// test.
func (p *page) form(action string) form {
	p.t.Helper()
	for _, n := range p.all("form") {
		if attr(n, "action") != action || !strings.EqualFold(attr(n, "method"), "post") {
			continue
		}
		var f form
		walk(n, func(c *html.Node) {
			name := attr(c, "name")
			switch c.Data {
			case "input":
				typ := attr(c, "type")
				f.all = append(f.all, name)
				if (typ == "checkbox" || typ == "radio") && !hasAttr(c, "checked") {
					return
				}
				if typ != "submit" && typ != "button" {
					f.fields = append(f.fields, field{name, attr(c, "value")})
				}
			case "textarea":
				f.all = append(f.all, name)
				// The parser drops the newline right after <textarea>, as
				// browsers do.
				f.fields = append(f.fields, field{name, text(c)})
			case "select":
				f.all = append(f.all, name)
				var chosen string
				for i, o := range findAll(c, "option") {
					if i == 0 || hasAttr(o, "selected") {
						chosen = attr(o, "value")
					}
				}
				f.fields = append(f.fields, field{name, chosen})
			case "button":
				if name != "" {
					f.buttons = append(f.buttons, name+"="+attr(c, "value"))
				}
			}
		})
		return f
	}
	p.t.Fatalf("%s has no form posting to %s; it has %v", p.path(), action, p.actions())
	return form{}
}

// actions lists the page's form actions.
func (p *page) actions() []string {
	var out []string
	for _, n := range p.all("form") {
		out = append(out, attr(n, "action"))
	}
	return out
}

// all finds every element of this tag.
func (p *page) all(tag string) []*html.Node { return findAll(p.doc, tag) }

// text is the visible text of the page's main part.
func (p *page) text() string {
	for _, n := range p.all("main") {
		return strings.Join(strings.Fields(text(n)), " ")
	}
	return ""
}

// notice and errorText are the page's one-time messages.
func (p *page) notice() string    { return p.byClass("notice") }
func (p *page) errorText() string { return p.byClass("error") }

func (p *page) byClass(class string) string {
	var out []string
	walk(p.doc, func(n *html.Node) {
		if slices.Contains(strings.Fields(attr(n, "class")), class) {
			out = append(out, strings.Join(strings.Fields(text(n)), " "))
		}
	})
	return strings.Join(out, " | ")
}

func walk(n *html.Node, fn func(*html.Node)) {
	if n.Type == html.ElementNode {
		fn(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func findAll(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) {
		if c.Data == tag {
			out = append(out, c)
		}
	})
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	return slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == key })
}

func text(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}
