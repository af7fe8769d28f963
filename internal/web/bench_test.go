package web_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/web"
	"github.com/palaverhq/palaver/internal/webhook"
)

// Sizes of the pages' benchmark world (§11: every page renders in ≤ 50 ms
// with these).
const (
	benchAgents        = 100
	benchConversations = 1000
	benchMessages      = 100_000
)

// pagesWorld is the benchmark's dashboard: one owner with benchAgents
// agents trading benchMessages messages in benchConversations
// conversations (every tenth with the owner in it), a project with 100
// items and a thread, and questions waiting. Built once per process.
type pagesWorld struct {
	handler  http.Handler
	cookie   *http.Cookie
	conv     string
	project  string
	item     string
	slug     string
	buildErr error
}

var (
	pagesOnce sync.Once
	pages     pagesWorld
)

func buildPages(dir string) (w pagesWorld) {
	fail := func(err error) pagesWorld { w.buildErr = err; return w }
	log := slog.New(slog.DiscardHandler)
	db, err := store.Open(ctx, store.Options{Database: filepath.Join(dir, "pages.db"), Synchronous: "NORMAL", Logger: log})
	if err != nil {
		return fail(err)
	}
	settings := hub.DefaultSettings()
	settings.PauseTurns, settings.Budget = 1<<20, 1<<20 // the world is made faster than brakes allow
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: log, Settings: settings})
	if err != nil {
		return fail(err)
	}
	desk := permissions.New(h, db)
	h.KeepPermissions(desk)
	if _, err := h.CreateUser(ctx, "alice", "Alice"); err != nil {
		return fail(err)
	}
	people := accounts.New(h, db, log)
	if err := people.SetPassword(ctx, "alice", "correct horse battery"); err != nil {
		return fail(err)
	}
	alice, err := h.User(ctx, "alice")
	if err != nil {
		return fail(err)
	}
	callers := make([]*hub.Caller, benchAgents)
	for i := range callers {
		slug := fmt.Sprintf("agent%03d", i)
		if _, err := h.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug, Description: "benchmark agent " + slug}); err != nil {
			return fail(err)
		}
		_, secret, err := h.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug})
		if err != nil {
			return fail(err)
		}
		if callers[i], err = h.Authenticate(ctx, secret); err != nil {
			return fail(err)
		}
	}
	w.slug = "agent000"
	convs := make([]string, benchConversations)
	for i := range convs {
		a, b := callers[i%benchAgents], callers[(i+1+i/benchAgents)%benchAgents]
		handles := []string{b.Agent.Handle()}
		if i%10 == 0 {
			handles = append(handles, "alice")
		}
		v, err := h.CreateThread(ctx, a, hub.ThreadSpec{Title: fmt.Sprintf("Work item %d", i), Participants: handles})
		if err != nil {
			return fail(err)
		}
		convs[i] = v.Conversation.ID
	}
	w.conv = convs[0]
	// Senders in parallel, each conversation in one goroutine's share.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	perConv := benchMessages / benchConversations
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < benchConversations; i += 16 {
				a, b := callers[i%benchAgents], callers[(i+1+i/benchAgents)%benchAgents]
				for n := range perConv {
					from := a
					if n%2 == 1 {
						from = b
					}
					if _, err := h.SendMessage(ctx, from, hub.SendInput{ConversationID: convs[i], Instance: "laptop",
						Body: fmt.Sprintf("Message %d of work item %d: the next step is to review the change and reply with what is missing.", n, i)}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fail(err)
	}
	for i := range 20 {
		if _, err := h.AskOwner(ctx, callers[i], fmt.Sprintf("Question %d: go ahead?", i), "laptop", "", nil); err != nil {
			return fail(err)
		}
	}
	p, err := h.CreateProject(ctx, alice, "Benchmark", "A project with a hundred items")
	if err != nil {
		return fail(err)
	}
	w.project = p.ID
	if _, err := h.SetProjectAgent(ctx, alice, p.ID, "agent000", hub.AccessSpeak, false); err != nil {
		return fail(err)
	}
	for i := range 100 {
		it, err := projects.New(h, db).AddItem(ctx, callers[0], p.ID, projects.ItemSpec{Title: fmt.Sprintf("Item %d", i)})
		if err != nil {
			return fail(err)
		}
		w.item = it.Item.ID
	}
	_, secret, err := people.SignIn(ctx, "alice", "correct horse battery", "127.0.0.1")
	if err != nil {
		return fail(err)
	}
	d, err := web.New(web.Options{Hub: h, Overview: overview.New(h, db), Accounts: people, Permissions: desk, Logger: log,
		Webhooks: webhook.NewHooks(webhook.HooksOptions{Hub: h, Store: db, Logger: log}),
		Remotes:  a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: h, Store: db, Logger: log})})
	if err != nil {
		return fail(err)
	}
	mux := http.NewServeMux()
	d.Register(mux)
	w.handler, w.cookie = mux, &http.Cookie{Name: "palaver", Value: secret}
	return w
}

// BenchmarkPages renders every page of the dashboard server-side, signed
// in as the owner of the benchmark world, through the dashboard's own
// handler (no network): the time a page takes to be read and drawn.
func BenchmarkPages(b *testing.B) {
	pagesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "palaver-pages-")
		if err != nil {
			pages.buildErr = err
			return
		}
		pages = buildPages(dir)
	})
	if pages.buildErr != nil {
		b.Fatal(pages.buildErr)
	}
	w := pages
	for _, pg := range []struct{ name, path string }{
		{"bridge", "/"},
		{"approvals", "/approvals"},
		{"conversations", "/conversations"},
		{"conversation", "/conversations/" + w.conv},
		{"agents", "/agents"},
		{"agent", "/agents/" + w.slug},
		{"contacts", "/contacts"},
		{"projects", "/projects"},
		{"project", "/projects/" + w.project},
		{"item", "/projects/" + w.project + "/items/" + w.item},
		{"settings", "/settings"},
	} {
		b.Run(pg.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", pg.path, nil)
				req.Host = "127.0.0.1:8420"
				req.AddCookie(w.cookie)
				rec := httptest.NewRecorder()
				w.handler.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("%s: %d %s", pg.path, rec.Code, rec.Body.String()[:min(200, rec.Body.Len())])
				}
			}
		})
	}
}
