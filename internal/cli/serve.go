package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/palaverhq/palaver/clients"
	"github.com/palaverhq/palaver/internal/a2a"
	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/api"
	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/metrics"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/web"
	"github.com/palaverhq/palaver/internal/webhook"
)

// runServe: palaver serve [--addr] [--database] [--base-url] … Runs until ctx
// ends (SIGINT/SIGTERM), then ends parked waits with timed_out and lets
// requests in flight finish (§14).
func runServe(ctx context.Context, e *env, args []string) (err error) {
	fs := newFlags(e, "serve", "serve [--addr 127.0.0.1:8420] [--database ./palaver.db] [--base-url URL]")
	cfg := config.Default()
	cfg.ServeFlags(fs, e.getenv)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := newLogger(e.stderr, cfg.LogFormat)
	// The MCP SDK allocates heavily per call; collecting garbage less often
	// is the cheapest speed-up (§17). GOGC in the environment still wins.
	if e.getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}

	// Listen before touching the database, so a server that cannot have its
	// address leaves no new database behind.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another server using this address? pass --addr)", cfg.Addr, err)
	}
	defer ln.Close()
	isNew := newDatabase(cfg.Database)
	db, err := store.Open(ctx, store.Options{Database: cfg.Database, Synchronous: cfg.Synchronous, Exclusive: true, Index: true, Logger: log})
	if err != nil {
		if isNew {
			removeDatabase(cfg.Database)
		}
		return err
	}
	defer db.Close()
	if isNew {
		log.Info("created a new database", "path", absPath(cfg.Database))
		// A server that fails before it serves takes its new database away.
		defer func() {
			if err != nil && isNew {
				db.Close()
				removeDatabase(cfg.Database)
			}
		}()
	}
	var waker hub.Waker = notify.NewLocal()
	var pg *notify.Postgres
	if store.IsPostgresURL(cfg.Database) {
		// Replicas wake each other's waiters through LISTEN/NOTIFY.
		if pg, err = notify.OpenPostgres(ctx, cfg.Database, log); err != nil {
			return fmt.Errorf("notifications: %w", err)
		}
		defer pg.Close()
		waker = pg
	}
	m := metrics.New()
	sender, err := webhook.New(webhook.Options{Metrics: m.Registry()})
	if err != nil {
		return err
	}
	notes, err := push.NewCounter(m.Registry())
	if err != nil {
		return err
	}
	remoteCalls, err := a2aclient.NewCalls(m.Registry())
	if err != nil {
		return err
	}
	observer, err := metrics.NewHubObserver(m.Registry())
	if err != nil {
		return err
	}
	if err := metrics.RegisterWriter(m.Registry(), db); err != nil {
		return err
	}
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: waker, Logger: log, Settings: cfg.Settings,
		PrivateHosts: cfg.PrivateHosts, Observer: observer,
		Alone: !store.IsPostgresURL(cfg.Database)})
	if err != nil {
		return err
	}
	if pg != nil {
		pg.OnReconnect(func() {
			if err := h.Recheck(ctx); err != nil && ctx.Err() == nil {
				log.Warn("rechecking for events after reconnecting", "err", err)
			}
		})
	}
	desk := permissions.New(h, db) // the permission requests Approvals shows
	h.KeepPermissions(desk)
	finder, boards, contacts := search.New(h, db), projects.New(h, db), reach.New(h, db)
	srv, err := mcpserver.New(mcpserver.Options{Hub: h, Search: finder, Projects: boards, Permissions: desk, Reach: contacts, Rooms: rooms.New(h, db), Logger: log, BaseURL: cfg.BaseURL, Origins: cfg.Origins, Metrics: m.Registry()})
	if err != nil {
		return err
	}
	people := accounts.New(h, db, log)
	hooks := webhook.NewHooks(webhook.HooksOptions{Hub: h, Store: db, Sender: sender, Logger: log})
	remotes := a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: h, Store: db, Client: newRemoteClient(), Logger: log})
	notices := push.NewNotices(push.NoticesOptions{Hub: h, Store: db, Sender: push.New(push.Options{}), Subject: cfg.VAPIDSubject, Logger: log})
	if err := notices.EnsureKeys(ctx); err != nil { // the Web Push key pair, made once and shared through the database
		return err
	}
	authority := oauth.NewAuthority(oauth.AuthorityOptions{Hub: h, Store: db, Fetcher: &oauth.Fetcher{}, Logger: log})
	mux := http.NewServeMux()
	srv.Register(mux)
	exports, a2aTasks, pages := export.New(h, db), tasks.New(h, db), overview.New(h, db)
	api.New(api.Options{Hub: h, Accounts: people, Webhooks: hooks, Remotes: remotes, Notices: notices, Exports: exports, A2A: a2aTasks, Search: finder, Projects: boards, Permissions: desk, Reach: contacts, Overview: pages, Logger: log}).Register(mux)
	a2a.New(a2a.Options{Hub: h, Tasks: a2aTasks, Logger: log, BaseURL: cfg.BaseURL}).Register(mux)
	// What OAuth tokens may be for (§10.6): each MCP endpoint, and the A2A
	// endpoints together.
	resources := append(srv.ResourcePaths(), hub.A2AResourcePath)
	oauth.New(oauth.Options{Authority: authority, Logger: log, BaseURL: cfg.BaseURL, Resources: resources, Proxies: cfg.TrustedProxies()}).Register(mux)
	dash, err := web.New(web.Options{Hub: h, Overview: pages, OAuth: authority, Accounts: people, Webhooks: hooks, Remotes: remotes, Notices: notices, Exports: exports, A2A: a2aTasks, Search: finder, Projects: boards, Permissions: desk, Reach: contacts, Logger: log, BaseURL: cfg.BaseURL, Proxies: cfg.TrustedProxies(), OAuthResources: resources})
	if err != nil {
		return err
	}
	dash.Register(mux)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /palaver.py", clients.ServePython)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := db.Meta(r.Context(), hub.MetaEpoch); err != nil {
			http.Error(w, "database unavailable", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})

	hs := &http.Server{
		Handler:           httpx.Wrap(m.Mount(mux), log), // GET /metrics, and every request counted
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// The public URL is what people and agents are told to use: the base
	// URL behind a proxy, else the address this server listens on (on
	// loopback when it listens on every interface).
	public := cfg.BaseURL
	if public == "" {
		public = "http://" + loopbackIfAny(ln.Addr().String())
	}
	if err := h.RecordPublicURL(ctx, public); err != nil {
		return err
	}
	log.Info("palaver is serving", "url", public, "dashboard", public+"/", "mcp", public+"/mcp/", "addr", ln.Addr().String(), "build", build.Current().String(), "tools", srv.Version(), "config", cfg.String())

	if cfg.BaseURL == "" {
		log.Info("no --base-url: OAuth clients (claude.ai, Claude Desktop, ChatGPT) need the server's public URL to sign in; start it with --base-url https://… (PALAVER_BASE_URL)")
	}
	isNew = false // serving: the database stays, whatever happens next
	go pruneEvents(ctx, h, log)
	go refreshRemoteCards(ctx, remotes, log)
	// Wake waiters for events committed by other processes on the database
	// (admin commands, other replicas) whose wake-up did not reach us.
	go h.RecheckEvery(ctx, time.Second)
	// Webhook calls (§18): those queued here at once, the others' and the
	// retries as they fall due, each endpoint with its own calls in flight
	// and rate, none waiting for another's. Stopping ends calls in flight;
	// their claims lapse and they are made again (at least once).
	hooksDone := make(chan struct{})
	go func() {
		defer close(hooksDone)
		hooks.Run(ctx, time.Second, sender.Count)
	}()
	// Messages to remote A2A agents (§18), from their outbox the same way.
	remotesDone := make(chan struct{})
	go func() {
		defer close(remotesDone)
		remotes.Run(ctx, time.Second, remoteCalls.Count)
	}()
	// Owner notifications (§19), the same way, each device and topic apart.
	notesDone := make(chan struct{})
	go func() {
		defer close(notesDone)
		notices.Run(ctx, time.Second, notes.Count)
	}()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: ending waits, finishing requests in flight")
	h.Shutdown()
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = hs.Shutdown(sctx)
	<-hooksDone
	<-remotesDone
	<-notesDone
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// removeDatabase deletes a SQLite file this process made, with its -wal and
// -shm files.
func removeDatabase(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// pruneEvents deletes expired events now and every hour (§6: kept 30 days).
func pruneEvents(ctx context.Context, h *hub.Hub, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if err := h.PruneEvents(ctx); err != nil && ctx.Err() == nil {
			log.Error("pruning events", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refreshRemoteCards reads again, every hour, the cards of remote A2A
// agents read more than a day ago (§18).
func refreshRemoteCards(ctx context.Context, remotes *a2aclient.Remotes, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := remotes.RefreshCards(ctx); err != nil && ctx.Err() == nil {
			log.Error("refreshing remote agents' cards", "err", err)
		}
	}
}

// runMigrate: palaver migrate [--database PATH] applies pending migrations
// (serve applies them on start too), making the database if there is none.
func runMigrate(ctx context.Context, e *env, args []string) error {
	return openAdmin(ctx, e, args, "migrate", 0, true, nil, func(*admin) error {
		fmt.Fprintln(e.stdout, "the database is up to date")
		return nil
	})
}
