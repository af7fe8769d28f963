// Package servertest is the real server the faces' tests run against
// (CONVENTIONS "Tests"): a hub on a temp store (storetest.Open: SQLite, or
// PostgreSQL with PALAVER_TEST_STORE) with the faces a test asks for
// mounted on one mux as `palaver serve` mounts them, behind httptest, and
// the few ways to make the people, agents and tokens a test starts from.
// It is for tests only.
package servertest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/a2a"
	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/api"
	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/store/storetest"
	"github.com/palaverhq/palaver/internal/web"
	"github.com/palaverhq/palaver/internal/webhook"
)

// Options say which faces to serve and on what. The zero value serves
// nothing but the hub.
type Options struct {
	// The faces mounted, each as serve mounts it.
	MCP, API, A2A, OAuth, Web bool
	// Wrap puts the shared middleware (httpx.Wrap) around the mux, as
	// serve does.
	Wrap bool
	// Settings are the hub's settings (zero: hub.DefaultSettings()).
	Settings hub.Settings
	// Hub sets more of the hub's options before it starts: a clock,
	// private hosts, a resolver, an observer.
	Hub func(*hub.Options)
	// WebhookSender makes the webhook calls (nil: they are queued, and
	// none is made).
	WebhookSender *webhook.Sender
	// PushSender sends owner notifications (nil: they are queued, and
	// none is sent).
	PushSender *push.Sender
	// VAPIDSubject is whom push services may contact, as serve's
	// --vapid-subject (empty: the public URL when it is https).
	VAPIDSubject string
	// RemoteClient calls remote A2A agents (nil: none can be added).
	RemoteClient *a2aclient.Client
	// Fetcher fetches OAuth client ID metadata documents (nil: clients
	// register instead).
	Fetcher oauth.DocumentFetcher
	// Store is served instead of a new temp one.
	Store hub.Store
	// Listener is listened on instead of a new loopback address (a
	// server started again where the last one was).
	Listener net.Listener
	// Logger is the server's log (nil: discarded).
	Logger *slog.Logger
	// MCPMetrics receives the MCP face's tool-call metrics (nil: none).
	MCPMetrics prometheus.Registerer
	// AdjustMCP runs on the MCP face before it is mounted.
	AdjustMCP []func(*mcpserver.Server)
}

// Server is the real server: its URL (no trailing slash), its hub, the
// waker its waits park on, and the faces that take more than the hub.
type Server struct {
	URL string
	Hub *hub.Hub
	// Store is the store the hub is on.
	Store hub.Store
	// OAuth is the authorization server's logic, as the OAuth face and
	// the consent page call it.
	OAuth *oauth.Authority
	// Overview reads the dashboard's Bridge and projects' pages.
	Overview *overview.Overview
	// Accounts lets the server's people in.
	Accounts *accounts.Accounts
	// Webhooks are the agents' webhooks and their outbox, and Remotes the
	// remote A2A agents and theirs, as the faces call them.
	Webhooks *webhook.Hooks
	Remotes  *a2aclient.Remotes
	// Notices are the people's owner notifications and their outbox.
	Notices *push.Notices
	// Exports gathers what people export, as the REST face and the
	// dashboard call it.
	Exports *export.Exporter
	// A2A is agents' A2A exposure and tasks, as the A2A face, the REST
	// face and the dashboard call it.
	A2A *tasks.Tasks
	// Search is search_messages, as the MCP face, the REST face and the
	// dashboard call it.
	Search *search.Finder
	// Projects is a project's items, requests and images, as the MCP
	// face, the REST face and the dashboard call it.
	Projects *projects.Projects
	// Permissions is the channels' permission requests, registered with
	// the hub as serve registers them.
	Permissions *permissions.Desk
	// Reach is contacts, peers and whom callers may reach, as the faces
	// call it.
	Reach *reach.Reach
	Waker *notify.Local
	// MCP is the MCP face, when mounted.
	MCP *mcpserver.Server
	// Close ends the server and its hub; the test's cleanup does too.
	Close func()
}

// Open starts the server for t; it ends with the test.
func Open(t testing.TB, o Options) *Server {
	t.Helper()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db := o.Store
	if db == nil {
		db = storetest.Open(t)
	}
	s := &Server{Waker: notify.NewLocal(), Store: db}
	ho := hub.Options{Store: db, Waker: s.Waker, Logger: log, Settings: o.Settings}
	if o.Hub != nil {
		o.Hub(&ho)
	}
	var err error
	if s.Hub, err = hub.New(context.Background(), ho); err != nil {
		t.Fatal(err)
	}
	s.Accounts = accounts.New(s.Hub, db, log)
	s.Exports = export.New(s.Hub, db)
	s.A2A = tasks.New(s.Hub, db)
	s.Search = search.New(s.Hub, db)
	s.Overview = overview.New(s.Hub, db)
	s.Projects = projects.New(s.Hub, db)
	s.Permissions = permissions.New(s.Hub, db)
	s.Hub.KeepPermissions(s.Permissions)
	s.Reach = reach.New(s.Hub, db)
	s.OAuth = oauth.NewAuthority(oauth.AuthorityOptions{Hub: s.Hub, Store: db, Fetcher: o.Fetcher, Logger: log})
	s.Webhooks = webhook.NewHooks(webhook.HooksOptions{Hub: s.Hub, Store: db, Sender: o.WebhookSender, Logger: log})
	s.Remotes = a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: s.Hub, Store: db, Client: o.RemoteClient, Logger: log})
	s.Notices = push.NewNotices(push.NoticesOptions{Hub: s.Hub, Store: db, Sender: o.PushSender, Subject: o.VAPIDSubject, Logger: log})
	if err := s.Notices.EnsureKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var resources []string // as serve has them: the MCP endpoints, then A2A
	if o.MCP {
		if s.MCP, err = mcpserver.New(mcpserver.Options{Hub: s.Hub, Search: s.Search, Projects: s.Projects, Permissions: s.Permissions, Reach: s.Reach, Rooms: rooms.New(s.Hub, db), Logger: log, Metrics: o.MCPMetrics}); err != nil {
			t.Fatal(err)
		}
		for _, f := range o.AdjustMCP {
			f(s.MCP)
		}
		s.MCP.Register(mux)
		resources = s.MCP.ResourcePaths()
	}
	resources = append(resources, hub.A2AResourcePath)
	if o.API {
		api.New(api.Options{Hub: s.Hub, Accounts: s.Accounts, Webhooks: s.Webhooks, Remotes: s.Remotes, Notices: s.Notices, Exports: s.Exports, A2A: s.A2A, Search: s.Search, Projects: s.Projects, Permissions: s.Permissions, Reach: s.Reach, Overview: s.Overview, Logger: log}).Register(mux)
	}
	if o.A2A {
		a2a.New(a2a.Options{Hub: s.Hub, Tasks: s.A2A, Logger: log}).Register(mux)
	}
	if o.OAuth {
		oauth.New(oauth.Options{Authority: s.OAuth, Logger: log, Resources: resources}).Register(mux)
	}
	if o.Web {
		d, err := web.New(web.Options{Hub: s.Hub, Overview: s.Overview, OAuth: s.OAuth, Accounts: s.Accounts, Webhooks: s.Webhooks, Remotes: s.Remotes, Notices: s.Notices, Exports: s.Exports, A2A: s.A2A, Search: s.Search, Projects: s.Projects, Permissions: s.Permissions, Reach: s.Reach, Logger: log, OAuthResources: resources})
		if err != nil {
			t.Fatal(err)
		}
		d.Register(mux)
	}
	var h http.Handler = mux
	if o.Wrap {
		h = httpx.Wrap(mux, log)
	}
	hs := httptest.NewUnstartedServer(h)
	if o.Listener != nil {
		hs.Listener.Close()
		hs.Listener = o.Listener
	}
	hs.Start()
	var once sync.Once
	s.Close = func() { once.Do(func() { s.Hub.Shutdown(); hs.CloseClientConnections(); hs.Close() }) }
	t.Cleanup(s.Close)
	s.URL = hs.URL
	return s
}

// Person makes a person (no display name) and returns an API token of
// theirs (plu_…).
func (s *Server) Person(t testing.TB, handle string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Hub.CreateUser(ctx, handle, ""); err != nil {
		t.Fatal(err)
	}
	_, secret, err := s.Hub.MintUserToken(ctx, handle, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// Agent makes the agent owner/slug, with a description, for a person made
// already, and returns a token of it with every scope (plv_…).
func (s *Server) Agent(t testing.TB, handle, description string) string {
	t.Helper()
	if _, err := s.Hub.CreateAgent(context.Background(), hub.AgentSpec{Handle: handle, Description: description}); err != nil {
		t.Fatal(err)
	}
	return s.Token(t, handle, nil)
}

// Token mints another token of an agent, with scopes (nil: every scope).
func (s *Server) Token(t testing.TB, handle string, scopes []string) string {
	t.Helper()
	owner, slug, _ := hub.ParseHandle(handle)
	_, secret, err := s.Hub.MintToken(context.Background(), hub.TokenSpec{Owner: owner, Agent: slug, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// Parked waits until n waits are parked on w, or fails the test after
// 10 s.
func Parked(t testing.TB, w *notify.Local, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waits parked, want %d", w.Waiters(), n)
		}
		runtime.Gosched()
	}
}

// Bearer sends every request with a bearer token.
type Bearer struct {
	Token string
	Next  http.RoundTripper // nil: http.DefaultTransport
}

// RoundTrip sends a copy of r carrying the token.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	next := b.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// Connect connects an MCP client from the SDK to the profile at endpoint
// (a server's URL and e.g. "/mcp/") with token, as an agent's loop does:
// streamable HTTP, no standalone stream, no retries; opts may name the
// protocol era. The session closes with the test.
func Connect(t testing.TB, endpoint, token string, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: Bearer{Token: token}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, opts)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Call calls a tool and returns its structured result as JSON objects
// decode, and whether it was a tool error.
func Call(t testing.TB, cs *mcp.ClientSession, tool string, args any) (map[string]any, bool) {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.Unmarshal(b, &out)
	return out, r.IsError
}
