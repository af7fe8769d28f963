// Package api is Palaver's REST face for people (DESIGN.md §11.3): the
// owner's actions — contacts, grants, approvals, agents and tokens,
// conversations as a person — as JSON over /api/v1, authenticated with a
// person's API token (plu_…). One route table, handlers that return an
// error, and one function, writeError, that turns hub errors into HTTP.
// Each aggregate's handlers sit in a file of its own with the typed views
// they answer (contacts.go, approvals.go, agents.go …); testdata/views.txtar
// pins the JSON of every one.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/webhook"
)

// API serves /api/v1.
type API struct {
	hub      *hub.Hub
	accounts *accounts.Accounts // how people join, for the admin's routes
	hooks    *webhook.Hooks     // the agents' webhooks
	remotes  *a2aclient.Remotes // the people's remote A2A agents
	notices  *push.Notices      // the people's owner notifications
	exports  *export.Exporter
	tasks    *tasks.Tasks
	finder   *search.Finder
	boards   *projects.Projects
	pages    *overview.Overview
	reach    *reach.Reach
	desk     *permissions.Desk
	log      *slog.Logger
}

// Options are what the REST face calls: the hub, and the leaves beside it.
type Options struct {
	Hub      *hub.Hub
	Accounts *accounts.Accounts // its people's accounts
	Webhooks *webhook.Hooks
	Remotes  *a2aclient.Remotes
	// Notices are the people's owner notifications (§19).
	Notices  *push.Notices
	Exports  *export.Exporter
	A2A      *tasks.Tasks // agents' A2A exposure
	Search   *search.Finder
	Projects *projects.Projects // items and images of projects
	// Overview is what an agent's page shows of it.
	Overview *overview.Overview
	// Reach is people's contacts: asking, listing, ending them.
	Reach *reach.Reach
	// Permissions are the channels' permission requests (§19).
	Permissions *permissions.Desk
	Logger      *slog.Logger
}

// New returns the REST face.
func New(o Options) *API {
	return &API{hub: o.Hub, accounts: o.Accounts, hooks: o.Webhooks, remotes: o.Remotes, notices: o.Notices, exports: o.Exports, tasks: o.A2A, finder: o.Search, boards: o.Projects, pages: o.Overview, reach: o.Reach, desk: o.Permissions, log: o.Logger}
}

// request is one authenticated call: the person and the HTTP request.
type request struct {
	*http.Request
	user *hub.User
}

// handler answers a request with a value to send as JSON (status 200), or
// an error for writeError.
type handler func(ctx context.Context, r *request) (any, error)

// route is one line of the route table.
type route struct {
	pattern string // net/http method pattern under /api/v1
	handle  handler
}

// routes is the whole REST API.
func (a *API) routes() []route {
	return []route{
		{"GET /me", a.me},
		{"GET /events", a.events},
		{"GET /tokens", a.userTokens},
		{"POST /tokens", a.mintUserToken},

		{"GET /people", a.people},
		{"PUT /signup", a.setSignup},
		{"POST /invites", noBody(a.invite)},

		{"GET /notifications", a.notifications},
		{"PUT /notifications", a.setNotifications},
		{"POST /notifications/push", a.addPushSubscription},
		{"POST /notifications/ntfy", a.addNtfyTopic},
		{"PUT /notifications/targets/{id}", a.setNotifyTargetKinds},
		{"DELETE /notifications/targets/{id}", noBody(a.removeNotifyTarget)},
		{"POST /notifications/test", noBody(a.testNotification)},

		{"GET /contacts", a.contacts},
		{"POST /contacts", a.requestContact},
		{"POST /contacts/{handle}/approve", noBody(a.contactDecision(true))},
		{"POST /contacts/{handle}/reject", noBody(a.contactDecision(false))},
		{"POST /contacts/{handle}/cancel", noBody(a.cancelContact)},
		{"POST /contacts/{handle}/remove", noBody(a.removeContact)},

		{"GET /approvals", a.approvals},
		{"POST /approvals/{id}/approve", a.decide(hub.VerdictApprove)},
		{"POST /approvals/{id}/reject", a.decide(hub.VerdictReject)},
		{"POST /approvals/{id}/answer", a.decide(hub.VerdictAnswer)},
		{"POST /questions/{id}/answer", a.decide(hub.VerdictAnswer)},

		{"GET /agents", a.agents},
		{"GET /presence", a.presence},
		{"POST /agents", a.createAgent},
		{"GET /agents/{slug}", a.agent},
		{"POST /agents/{slug}/archive", noBody(a.archiveAgent)},
		{"POST /agents/{slug}/unarchive", noBody(a.unarchiveAgent)},
		{"PUT /agents/{slug}/mode", a.setMode},
		{"PUT /agents/{slug}/public", a.setPublic},
		{"GET /agents/{slug}/a2a", a.agentA2A},
		{"PUT /agents/{slug}/a2a", a.setA2A},
		{"PUT /agents/{slug}/grants/{contact}", a.setGrant},
		{"GET /agents/{slug}/inbox", a.agentInbox},
		{"GET /agents/{slug}/tokens", a.tokens},
		{"POST /agents/{slug}/tokens", a.mintToken},
		{"DELETE /tokens/{id}", noBody(a.revokeToken)},
		{"GET /remote-agents", a.remoteAgents},
		{"POST /remote-agents", a.addRemoteAgent},
		{"DELETE /remote-agents/{slug}", noBody(a.removeRemoteAgent)},
		{"GET /agents/{slug}/webhooks", a.webhooks},
		{"POST /agents/{slug}/webhooks", a.addWebhook},
		{"DELETE /agents/{slug}/webhooks/{id}", noBody(a.removeWebhook)},
		{"POST /agents/{slug}/webhooks/{id}/enable", noBody(a.enableWebhook)},

		{"GET /projects", a.projects},
		{"POST /projects", a.createProject},
		{"GET /projects/{id}", a.project},
		{"PATCH /projects/{id}", a.updateProject},
		{"POST /projects/{id}/archive", noBody(a.archiveProject(true))},
		{"POST /projects/{id}/unarchive", noBody(a.archiveProject(false))},
		{"PUT /projects/{id}/members/{handle}", noBody(a.addMember)},
		{"DELETE /projects/{id}/members/{handle}", noBody(a.removeMember)},
		{"PUT /projects/{id}/agents/{agent...}", a.setProjectAgent},
		{"DELETE /projects/{id}/agents/{agent...}", noBody(a.removeProjectAgent)},
		{"POST /projects/{id}/threads", a.openThread},
		{"GET /projects/{id}/items/{item}", a.item},
		{"GET /projects/{id}/images/{image}", a.image},
		{"GET /projects/{id}/export", a.exportProject},

		{"GET /conversations", a.conversations},
		{"GET /conversations/{id}", a.conversation},
		{"POST /conversations/{id}/close", noBody(a.closeConversation)},
		{"GET /conversations/{id}/messages", a.messages},
		{"POST /conversations/{id}/messages", a.post},
		{"POST /conversations/{id}/resume", noBody(a.resume)},
		{"GET /conversations/{id}/export", a.exportConversation},
		{"GET /search", a.search},
	}
}

// Register mounts the routes on mux under /api/v1.
func (a *API) Register(mux *http.ServeMux) {
	for _, rt := range a.routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		mux.Handle(method+" /api/v1"+path, a.serve(rt.handle))
	}
	// Anything else under /api/v1 gets the same error shape.
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		a.writeError(w, r, hub.Errorf(hub.KindNotFound, "no route %s %s; the routes are listed in docs/api.md", r.Method, r.URL.Path))
	})
}

// timeText is how every view writes a time: RFC 3339 in UTC with
// milliseconds, "" for none.
var timeText = hub.FormatTime

// viewsOf is each of xs as a view: [] when there are none, never null.
func viewsOf[T, V any](xs []T, view func(T) V) []V {
	out := make([]V, 0, len(xs))
	for _, x := range xs {
		out = append(out, view(x))
	}
	return out
}

// file is an answer that is not JSON: bytes of a content type, an image.
type file struct {
	contentType string
	data        []byte
}

// download is an answer to save as a file (an export's archive): its
// type and name, and what writes its bytes, streamed.
type download struct {
	contentType, filename string
	write                 func(w io.Writer) error
}

// maxBody bounds a request body (§15).
const maxBody = 1 << 20

// serve authenticates the person and runs h.
func (a *API) serve(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 7235)
			token = ""
		}
		u, err := a.hub.AuthenticateUser(r.Context(), strings.TrimSpace(token))
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		v, err := h(r.Context(), &request{Request: r, user: u})
		if err != nil {
			a.writeError(w, r, err)
			return
		}
		if f, ok := v.(file); ok {
			httpx.WriteBytes(w, f.contentType, f.data)
			return
		}
		if d, ok := v.(download); ok {
			httpx.Attachment(w, d.contentType, d.filename)
			if err := d.write(w); err != nil {
				// The status is sent: the client sees a cut archive.
				a.log.Error("api download cut short", "route", r.Pattern, "err", err)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	})
}

// writeError is the REST face's one translation of errors (CONVENTIONS
// "Errors"): {"error":{"code","message"},"trace"} with the kind's status,
// one log line under the trace id. A refusal that is part of the contract
// (pending_approval, denied) is 409 with its status and reason.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, err error) {
	trace := httpx.NewTrace()
	var body map[string]any
	code := http.StatusConflict
	var ref *hub.Refusal
	if errors.As(err, &ref) {
		body = map[string]any{"status": ref.Status, "reason": ref.Text(nil), "trace": trace}
		a.log.Info("api refused", "trace", trace, "route", r.Pattern, "status", ref.Status, "reason", ref.Text(nil))
	} else {
		e := hub.AsError(err)
		code = httpx.Status(e.Kind)
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		msg, level := e.Text(nil, restWay), slog.LevelInfo
		if e.Kind == hub.KindInternal {
			msg, level = "internal error (trace "+trace+"); retry later", slog.LevelError
		}
		attrs := []any{"trace", trace, "route", r.Pattern, "code", e.WireCode(), "message", e.Text(nil, nil)}
		if e.Err != nil {
			attrs = append(attrs, "cause", e.Err.Error())
		}
		a.log.Log(r.Context(), level, "api error", attrs...)
		body = map[string]any{"error": map[string]any{"code": e.WireCode(), "message": msg}, "trace": trace}
		for k, v := range e.Details { // retry_after_s, latest_cursor …
			body[k] = v
		}
		if retry, ok := e.Details["retry_after_s"]; ok {
			w.Header().Set("Retry-After", fmt.Sprint(retry))
		}
		if e.Kind == hub.KindUnauthenticated {
			w.Header().Set("WWW-Authenticate", `Bearer realm="palaver"`)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

// body is how the REST face names a request body in its refusals.
var body = input.Spec{Whole: "the body", Part: "field", Taker: "this route"}

// restWay is the REST face's way to do what a hint names (hub.Hint): its
// route.
func restWay(a hub.Action) string {
	switch a.Name {
	case hub.ActionApproveContact:
		return "with: POST /api/v1/contacts/" + a.Args["handle"] + "/approve (or /reject)"
	case hub.ActionListApprovals:
		return "with: GET /api/v1/approvals"
	case hub.ActionListTokens:
		return "with: GET /api/v1/tokens (yours) or GET /api/v1/agents/SLUG/tokens (an agent's)"
	case hub.ActionMintAgentToken:
		return "with: POST /api/v1/agents/SLUG/tokens"
	case hub.ActionMintPersonToken:
		return "with: the dashboard (Settings), or POST /api/v1/tokens with another of your person tokens"
	case hub.ActionCreatePerson:
		return "with: POST /api/v1/invites (an invitation link, for the admin)"
	}
	return "with: the routes in docs/api.md"
}

// noBody is h for a route that takes no body: none, or {}, is all it
// takes; anything else is refused before h acts, as decode refuses it.
func noBody(h handler) handler {
	return func(ctx context.Context, r *request) (any, error) {
		if err := decode(r, &struct{}{}); err != nil {
			return nil, err
		}
		return h(ctx, r)
	}
}

// decode reads a JSON body into v by the hub's strict reading: exact field
// names, each once, wrong types in JSON's words (§4 input hygiene). A body
// over maxBody is too_large, which writeError answers with 413.
func decode(r *request, v any) error {
	raw, err := io.ReadAll(r.Body)
	if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
		return &hub.Error{Kind: hub.KindInvalid, Code: "too_large", Err: err,
			Msg: fmt.Sprintf("the body is over %d bytes (1 MiB), the most a request may carry; send less", tooBig.Limit)}
	}
	if err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	return body.Decode(raw, v)
}

// intQuery reads an integer query parameter within rng; left out, it is
// def (0, the hub's "not given", takes the hub's default).
func intQuery(r *request, name string, rng hub.Range, def int64) (int64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	return rng.Parse(name, s)
}
