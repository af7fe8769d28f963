// Package web is Palaver's dashboard (DESIGN.md §11): server-rendered pages
// where people sign in, decide what waits for them, read and write in their
// agents' conversations, and manage agents, tokens and contacts. Pages are
// html/template, progressively enhanced with htmx and server-sent events;
// every page and form works with JavaScript off. One route table, handlers
// that decode, make a hub call and return a reply, and one function,
// serveError, that turns errors into a page or a form's message.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/webhook"
)

//go:embed templates static
var files embed.FS

// Options configure the dashboard.
type Options struct {
	Hub    *hub.Hub
	Logger *slog.Logger
	// BaseURL is where people reach the server; https makes the sign-in
	// cookie Secure, and its origin is trusted for forms. When set, only
	// its host is served; otherwise only addresses and localhost are.
	BaseURL string
	// Proxies are the reverse proxies whose X-Forwarded-For names the
	// client, whom sign-ins are throttled by.
	Proxies []netip.Prefix
	// Overview reads what the Bridge and the projects' pages show.
	Overview *overview.Overview
	// OAuth is the authorization server's logic the consent page calls.
	OAuth *oauth.Authority
	// Accounts lets people in: setup, sign-up, sign-in, invitations.
	Accounts *accounts.Accounts
	// Webhooks are the agents' webhooks, on each agent's page.
	Webhooks *webhook.Hooks
	// Remotes are the person's remote A2A agents, on the agents page.
	Remotes *a2aclient.Remotes
	// Notices are the person's owner notifications, on the Settings page.
	Notices *push.Notices
	// Exports gathers what a person exports.
	Exports *export.Exporter
	// A2A is agents' A2A exposure, set on their pages.
	A2A *tasks.Tasks
	// Search is a person's search of their conversations.
	Search *search.Finder
	// Projects is the items of a project's board and its images.
	Projects *projects.Projects
	// Reach is people's contacts: asking, listing, ending them, on the Contacts page.
	Reach *reach.Reach
	// Permissions are the channels' permission requests, under Approvals.
	Permissions *permissions.Desk
	// OAuthResources are the paths of the resources an OAuth client may
	// be given a token for — the MCP endpoints and the A2A one — the
	// default first (the consent page).
	OAuthResources []string
}

// Web serves the dashboard.
type Web struct {
	hub       *hub.Hub
	log       *slog.Logger
	secure    bool
	base      string // the configured public URL, scheme and host ("" when none)
	host      string // its host, the one Host a request may name ("" when none)
	proxies   []netip.Prefix
	overview  *overview.Overview
	oauth     *oauth.Authority
	accounts  *accounts.Accounts
	hooks     *webhook.Hooks
	remotes   *a2aclient.Remotes
	notices   *push.Notices
	exports   *export.Exporter
	tasks     *tasks.Tasks
	finder    *search.Finder
	boards    *projects.Projects
	reach     *reach.Reach
	desk      *permissions.Desk
	resources []string // OAuthResources
	pages     map[string]*template.Template
	parsed    map[string]*template.Template // the pages as parsed, never drawn (page)
	zonedMu   sync.Mutex
	zoned     map[string]*template.Template // by time zone and page, made on first use
	static    map[string]asset
}

// New parses every template and loads the static files; a broken
// template fails here, at start.
func New(o Options) (*Web, error) {
	w := &Web{hub: o.Hub, log: o.Logger, pages: map[string]*template.Template{}, parsed: map[string]*template.Template{}, zoned: map[string]*template.Template{}, static: map[string]asset{}, proxies: o.Proxies, overview: o.Overview, oauth: o.OAuth, accounts: o.Accounts, hooks: o.Webhooks, remotes: o.Remotes, notices: o.Notices, exports: o.Exports, tasks: o.A2A, finder: o.Search, boards: o.Projects, reach: o.Reach, desk: o.Permissions, resources: o.OAuthResources}
	if u, err := url.Parse(o.BaseURL); err == nil && u.Scheme != "" {
		w.secure = u.Scheme == "https"
		w.base, w.host = u.Scheme+"://"+u.Host, u.Host
	}
	if err := w.loadStatic(); err != nil {
		return nil, err
	}
	if err := w.parse(); err != nil {
		return nil, err
	}
	return w, nil
}

// request is one dashboard request: the HTTP request, and the person
// signed in (nil on a public page when nobody is).
type request struct {
	*http.Request
	user      *hub.User
	secret    string          // the sign-in's cookie value
	approvals *[]hub.Approval // what waits for the person, once read
	stream    string          // the page's event stream ("": the plain one)
}

// waiting is what waits for the person, read once per request: the page
// and the count in the navigation share it.
func (w *Web) waiting(ctx context.Context, r *request) ([]hub.Approval, error) {
	if r.approvals == nil {
		as, err := w.hub.Approvals(ctx, r.user)
		if err != nil {
			return nil, err
		}
		r.approvals = &as
	}
	return *r.approvals, nil
}

// reply is what a handler answers: a page to render, or (after a form) a
// place to go and a notice to show there once.
type reply struct {
	page     string
	data     any
	redirect string
	notice   string
	cookies  []*http.Cookie
	image    *hub.Image // bytes to send as they are, not a page
	bytes    []byte
	download *download // a file to save, not a page
	stream   string    // the page's event stream, when not the plain one
}

// download is a file to save (an export's archive): its type, its name,
// and what writes its bytes, streamed.
type download struct {
	contentType, filename string
	write                 func(w io.Writer) error
}

// again is a form shown again with the error that stopped it: sign-in,
// setup and sign-up keep what was typed (but never a password).
type again struct {
	page string
	data any
	err  error
}

func (a *again) Error() string { return a.err.Error() }
func (a *again) Unwrap() error { return a.err }

// handler answers one route.
type handler func(ctx context.Context, r *request) (*reply, error)

// route is one line of the route table.
type route struct {
	pattern string
	handle  handler
	public  bool   // served to people who are not signed in
	back    string // after a failed form, the page to go back to ({name}s filled from the path)
	asks    *asks  // the form destroys: it asks first
}

// routes is the whole dashboard.
func (w *Web) routes() []route {
	return []route{
		{pattern: "GET /setup", handle: w.setupPage, public: true},
		{pattern: "POST /setup", handle: w.setup, public: true},
		{pattern: "GET /signin", handle: w.signinPage, public: true},
		{pattern: "POST /signin", handle: w.signin, public: true},
		{pattern: "GET /signup", handle: w.signupPage, public: true},
		{pattern: "POST /signup", handle: w.signup, public: true},
		{pattern: "POST /signout", handle: w.signout, public: true},

		{pattern: "GET /{$}", handle: w.home},

		{pattern: "GET /approvals", handle: w.approvals},
		{pattern: "POST /approvals/{id}/{action}", handle: w.decide, back: "/approvals"},

		{pattern: "GET /conversations", handle: w.conversations},
		{pattern: "GET /conversations/{id}", handle: w.conversation},
		{pattern: "POST /conversations/{id}/messages", handle: w.post, back: "/conversations/{id}"},
		{pattern: "POST /conversations/{id}/resume", handle: w.resume, back: "/conversations/{id}"},
		{pattern: "POST /conversations/{id}/close", handle: w.closeConversation, back: "/conversations/{id}"},
		{pattern: "GET /conversations/{id}/export", handle: w.exportConversation},

		{pattern: "GET /search", handle: w.search},

		{pattern: "GET /agents", handle: w.agents},
		{pattern: "POST /agents", handle: w.createAgent, back: "/agents"},
		{pattern: "POST /remote-agents", handle: w.addRemoteAgent, back: "/agents"},
		{pattern: "POST /remote-agents/{slug}/remove", handle: w.removeRemoteAgent, back: "/agents"},
		{pattern: "GET /agents/{slug}", handle: w.agent},
		{pattern: "POST /agents/{slug}/mode", handle: w.setMode, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/public", handle: w.setPublic, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/a2a", handle: w.setA2A, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/tokens", handle: w.mintToken, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/tokens/{id}/revoke", handle: w.revokeToken, back: "/agents/{slug}", asks: &asks{"revoke-token", pathValue("id")}},
		{pattern: "POST /agents/{slug}/grants", handle: w.setGrant, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/archive", handle: w.archive(true), back: "/agents/{slug}", asks: &asks{"archive", ownAgentName}},
		{pattern: "POST /agents/{slug}/unarchive", handle: w.archive(false), back: "/agents/{slug}"},

		{pattern: "GET /contacts", handle: w.contacts},
		{pattern: "POST /contacts", handle: w.requestContact, back: "/contacts"},
		{pattern: "POST /contacts/{handle}/{action}", handle: w.contactAction, back: "/contacts", asks: &asks{"contact", removedContact}},

		{pattern: "GET /settings", handle: w.settings},
		{pattern: "POST /settings/signup", handle: w.setSignup, back: "/settings"},
		{pattern: "POST /settings/email", handle: w.setEmail, back: "/settings"},
		{pattern: "POST /settings/notifications", handle: w.setNotifications, back: "/settings"},
		{pattern: "POST /settings/notifications/ntfy", handle: w.addNtfyTopic, back: "/settings"},
		{pattern: "POST /settings/notifications/push", handle: w.addPushSubscription, back: "/settings"},
		{pattern: "POST /settings/notifications/test", handle: w.testNotification, back: "/settings"},
		{pattern: "POST /settings/notifications/{id}/kinds", handle: w.setNotifyTargetKinds, back: "/settings"},
		{pattern: "POST /settings/notifications/{id}/remove", handle: w.removeNotifyTarget, back: "/settings"},
		{pattern: "POST /settings/invites", handle: w.invite, back: "/settings"},
		{pattern: "POST /settings/tokens", handle: w.mintUserToken, back: "/settings"},
		{pattern: "POST /settings/password", handle: w.changePassword, back: "/settings#account"},
		{pattern: "POST /settings/signins/others", handle: w.signOutOthers, back: "/settings#signins"},
		{pattern: "POST /settings/invites/{id}/revoke", handle: w.revokeInvite, back: "/settings#invites"},
		{pattern: "POST /settings/tokens/{id}/revoke", handle: w.revokeUserToken, back: "/settings", asks: &asks{"revoke-token", pathValue("id")}},

		{pattern: "GET /projects", handle: w.projects},
		{pattern: "POST /projects", handle: w.createProject, back: "/projects"},
		{pattern: "GET /projects/{id}", handle: w.project},
		{pattern: "POST /projects/{id}/members", handle: w.addMember, back: "/projects/{id}"},
		{pattern: "POST /projects/{id}/members/{handle}/remove", handle: w.removeMember, back: "/projects/{id}", asks: &asks{"member", pathValue("handle")}},
		{pattern: "POST /projects/{id}/agents", handle: w.bringAgent, back: "/projects/{id}"},
		{pattern: "POST /projects/{id}/cap", handle: w.setCap, back: "/projects/{id}"},
		{pattern: "POST /projects/{id}/threads", handle: w.openThread, back: "/projects/{id}"},
		{pattern: "POST /projects/{id}/post", handle: w.postInThread, back: "/projects/{id}#threads"},
		{pattern: "POST /projects/{id}/items", handle: w.addItem, back: "/projects/{id}#board"},
		{pattern: "POST /projects/{id}/items/{item}", handle: w.editItem, back: "/projects/{id}/items/{item}"},
		{pattern: "GET /projects/{id}/items/{item}", handle: w.item},
		{pattern: "POST /projects/{id}/items/{item}/status", handle: w.moveItem, back: "/projects/{id}"},
		{pattern: "GET /projects/{id}/images/{image}", handle: w.image},
		{pattern: "GET /projects/{id}/export", handle: w.exportProject},

		{pattern: "GET /consent", handle: w.consent},
		{pattern: "POST /consent", handle: w.decideConsent},
		{pattern: "POST /agents/{slug}/clients/revoke", handle: w.revokeClient, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/webhooks", handle: w.addWebhook, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/webhooks/{id}/remove", handle: w.removeWebhook, back: "/agents/{slug}"},
		{pattern: "POST /agents/{slug}/webhooks/{id}/enable", handle: w.enableWebhook, back: "/agents/{slug}"},
	}
}

// Register mounts the dashboard on mux. Every state-changing request
// passes http.CrossOriginProtection first.
func (w *Web) Register(mux *http.ServeMux) {
	cop := http.NewCrossOriginProtection()
	if w.base != "" {
		cop.AddTrustedOrigin(w.base)
	}
	cop.SetDenyHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.serveError(rw, &request{Request: r}, hub.Errorf(hub.KindForbidden, "this form was sent from another site, so it was refused; open the dashboard and send it from there"), "")
	}))
	routes := w.routes()
	pages := map[string]bool{}
	for _, rt := range routes {
		mux.Handle(rt.pattern, cop.Handler(w.serve(rt)))
		if path, ok := strings.CutPrefix(rt.pattern, "GET "); ok {
			pages[path] = true
		}
	}
	// A form's address opened as a page (reloading after a form, going
	// back to it) leads to the page the form is on.
	for _, rt := range routes {
		path, ok := strings.CutPrefix(rt.pattern, "POST ")
		if ok && rt.back != "" && !pages[path] {
			mux.HandleFunc("GET "+path, func(rw http.ResponseWriter, r *http.Request) {
				http.Redirect(rw, r, fillPath(rt.back, r), http.StatusSeeOther)
			})
		}
	}
	mux.Handle("GET /static/{name}", http.HandlerFunc(w.serveStatic))
	w.registerNotify(mux)
	mux.Handle("GET /events/stream", http.HandlerFunc(w.stream))
	mux.Handle("/", cop.Handler(w.serve(route{handle: func(ctx context.Context, r *request) (*reply, error) {
		return nil, hub.Errorf(hub.KindNotFound, "there is no page at %s", r.URL.Path)
	}})))
}

// serve signs the person in from their cookie, runs the route's handler
// and writes its reply.
func (w *Web) serve(rt route) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, hr *http.Request) {
		if !w.knownHost(hr.Host) {
			w.serveError(rw, &request{Request: hr}, hub.Errorf(hub.KindForbidden, "this dashboard is not served as %s; open it at its own address (the server's --base-url)", echoHost(hr.Host)), "")
			return
		}
		r := w.fromCookie(hr)
		if r.user == nil && !rt.public {
			w.serveError(rw, r, hub.Errorf(hub.KindUnauthenticated, "sign in first"), "")
			return
		}
		hr.Body = http.MaxBytesReader(rw, hr.Body, maxForm)
		if err := hr.ParseForm(); err != nil {
			var tooBig *http.MaxBytesError
			msg := "this form could not be read; send it again from the page"
			if errors.As(err, &tooBig) {
				msg = fmt.Sprintf("this form is over %d KiB; a message is at most %d characters", maxForm>>10, hub.MaxBody)
			}
			w.serveError(rw, r, hub.Errorf(hub.KindInvalid, "%s", msg), fillPath(rt.back, hr))
			return
		}
		// A page's event stream starts where the events stood before the
		// page read what it shows, so nothing that happens while it is
		// drawn, or before the browser opens the stream, goes unheard.
		var from string
		part := hr.Header.Get("HX-Request") == "true" && hr.Header.Get("HX-Boosted") != "true"
		if r.user != nil && hr.Method == http.MethodGet && !part {
			from, _ = w.hub.LatestCursor(hr.Context(), r.user.ID)
		}
		rep, ok := confirmed(rt, r)
		var err error
		if ok {
			rep, err = rt.handle(hr.Context(), r)
		}
		if err != nil {
			w.serveError(rw, r, err, fillPath(rt.back, hr))
			return
		}
		for _, c := range rep.cookies {
			http.SetCookie(rw, c)
		}
		if rep.image != nil {
			httpx.WriteBytes(rw, rep.image.MIME, rep.bytes)
			return
		}
		if d := rep.download; d != nil {
			httpx.Attachment(rw, d.contentType, d.filename)
			if err := d.write(rw); err != nil {
				// The status is sent: the browser sees a cut download.
				w.log.Error("dashboard download cut short", "route", rt.pattern, "err", err)
			}
			return
		}
		if rep.redirect != "" {
			if rep.notice != "" {
				w.setFlash(rw, flash{Notice: rep.notice})
			}
			http.Redirect(rw, hr, rep.redirect, http.StatusSeeOther)
			return
		}
		r.stream = rep.stream
		if r.stream == "" && from != "" {
			r.stream = "/events/stream?" + url.Values{"cursor": {from}}.Encode()
		}
		w.render(rw, r, http.StatusOK, rep.page, rep.data, flash{})
	})
}

// knownHost reports whether a request's Host is the dashboard's own
// (httpx.KnownHost): a page on another name that resolves here (DNS
// rebinding) cannot drive the dashboard, first-run setup included.
func (w *Web) knownHost(host string) bool { return httpx.KnownHost(w.host, host) }

// echoHost is a Host header as a message may quote it.
func echoHost(h string) string { return strconv.Quote(hub.Preview(h, 80)) }

// fromCookie is the request with the person its sign-in cookie names,
// while that sign-in lasts.
func (w *Web) fromCookie(hr *http.Request) *request {
	r := &request{Request: hr}
	if c, err := hr.Cookie(w.cookieName()); err == nil && c.Value != "" {
		r.secret = c.Value
		if u, err := w.accounts.SignedIn(hr.Context(), c.Value); err == nil {
			r.user = u
		}
	}
	return r
}

// maxForm bounds a form's body: a message of hub.MaxBody and its fields.
const maxForm = 1 << 20

// fillPath puts the request's path values into a route's back pattern
// (which may end in a #fragment).
func fillPath(pattern string, r *http.Request) string {
	if pattern == "" {
		return ""
	}
	pattern, fragment, ok := strings.Cut(pattern, "#")
	if ok {
		fragment = "#" + fragment
	}
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, "{"); ok {
			parts[i] = url.PathEscape(r.PathValue(strings.TrimSuffix(name, "}")))
		}
	}
	return strings.Join(parts, "/") + fragment
}

// form reads a field of a posted form (never the URL's query). Browsers
// send a textarea's line ends as CRLF; they come back as the LF they were
// shown as, so a held message approved unchanged is not taken for an edit.
func form(r *request, name string) string {
	return strings.ReplaceAll(r.PostFormValue(name), "\r\n", "\n")
}

// clientAddr is the address sign-ins are throttled by.
func (w *Web) clientAddr(r *http.Request) string { return httpx.ClientAddr(r, w.proxies) }

// cookieName is the sign-in cookie's name; over https it takes the
// __Host- prefix, so no other host or path can set it.
func (w *Web) cookieName() string {
	if w.secure {
		return "__Host-palaver"
	}
	return "palaver"
}
