// Package a2a is Palaver's A2A face (DESIGN.md §18): an Agent Card for each
// agent its owner exposes, a directory of an owner's exposed agents, and the
// JSON-RPC endpoint A2A clients send messages to. It decodes, makes one
// call of the hub or of its A2A leaf (internal/a2a/tasks), and renders;
// every rule — who may call, what a task's state is, what cancel does — is
// theirs.
//
// It speaks A2A 1.0 and, for the clients before it, A2A 0.3, each request
// in the revision its A2A-Version header names (none: 0.3). The 1.0 card
// lists both as interfaces of the one endpoint. 0.3 is rendered with the
// A2A Go SDK's wire types (a2a-go); 1.0 with this package's own, written
// from the specification (wire10.go).
//
// Paths, under the server's base URL:
//
//	GET  /a2a/{owner}                                    the owner's exposed agents' cards
//	GET  /a2a/{owner}/{slug}/.well-known/agent-card.json the agent's card
//	POST /a2a/{owner}/{slug}                             JSON-RPC. A2A 1.0: SendMessage,
//	                                                     SendStreamingMessage, GetTask, ListTasks,
//	                                                     CancelTask, SubscribeToTask. A2A 0.3:
//	                                                     message/send, message/stream, tasks/get,
//	                                                     tasks/cancel, tasks/resubscribe
//
// The SDK's server plumbing (a2asrv) is not used: its JSON-RPC handler
// keeps its own task store and executions in memory, which would duplicate
// the hub's state and not follow a task across replicas, and it answers
// every error with the SDK's fixed message, so a brake's word and trace id
// could not be the error's message.
package a2a

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

// maxBody caps a JSON-RPC request: a message of hub.MaxBody code points
// (up to 4 bytes each, escaped) and its envelope.
const maxBody = 256 << 10

// Options configure the face.
type Options struct {
	Hub     *hub.Hub
	Tasks   *tasks.Tasks // exposure and tasks
	Logger  *slog.Logger
	BaseURL string // the public URL; "" takes it from each request
}

// Server is the A2A face.
type Server struct {
	hub      *hub.Hub
	tasks    *tasks.Tasks
	log      *slog.Logger
	baseURL  string
	baseHost string
}

// New returns the face.
func New(o Options) *Server {
	s := &Server{hub: o.Hub, tasks: o.Tasks, log: o.Logger, baseURL: strings.TrimSuffix(o.BaseURL, "/")}
	if u, err := url.Parse(s.baseURL); err == nil {
		s.baseHost = u.Host
	}
	return s
}

// Register mounts the face on mux.
func (s *Server) Register(mux *http.ServeMux) {
	mux.Handle("GET /a2a/{owner}", s.guard(s.directory))
	mux.Handle("GET /a2a/{owner}/{$}", s.guard(s.directory))
	mux.Handle("GET /a2a/{owner}/{slug}"+CardPath, s.guard(s.card))
	mux.Handle("POST /a2a/{owner}/{slug}", s.guard(s.endpoint))
	mux.Handle("/a2a/{owner}/{slug}", s.guard(func(w http.ResponseWriter, r *http.Request) {
		// Not POST: the endpoint takes only JSON-RPC, but a card that does
		// not exist is a 404 whatever the method.
		if _, err := s.tasks.ExposedAgent(r.Context(), r.PathValue("owner"), r.PathValue("slug")); err != nil {
			s.httpError(w, r, err)
			return
		}
		w.Header().Set("Allow", "POST")
		http.Error(w, "the A2A endpoint takes JSON-RPC by POST; its card is at "+r.URL.Path+CardPath, http.StatusMethodNotAllowed)
	}))
	// The A2A resource's metadata (RFC 9728), at its path and, for a
	// client that inserts the well-known path into the endpoint it called,
	// under it.
	mux.Handle(oauth.ResourceMetadataPath+"/a2a", s.guard(s.resourceMetadata))
	mux.Handle(oauth.ResourceMetadataPath+hub.A2AResourcePath, s.guard(s.resourceMetadata))
	mux.Handle("/a2a/", s.guard(func(w http.ResponseWriter, r *http.Request) {
		s.httpError(w, r, hub.Errorf(hub.KindNotFound, "nothing is at %s; an agent's card is at /a2a/OWNER/SLUG%s", r.URL.Path, CardPath))
	}))
}

// guard serves only this server's own Host, so no forged one is reflected
// into a card's URLs (§15), and lets browser-based A2A clients call: the
// face uses no cookies, only bearer tokens.
func (s *Server) guard(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.KnownHost(s.baseHost, r.Host) {
			http.Error(w, "this server is not served as "+r.Host+"; use its --base-url", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, A2A-Version, A2A-Extensions")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next(w, r)
	})
}

func (s *Server) base(r *http.Request) string {
	return strings.TrimSuffix(httpx.BaseURL(s.baseURL, r), "/")
}

// endpointURL is the agent's JSON-RPC endpoint.
func (s *Server) endpointURL(r *http.Request, a *hub.Agent) string {
	return s.base(r) + "/a2a/" + url.PathEscape(a.OwnerHandle) + "/" + url.PathEscape(a.Slug)
}

// resourceMetadata is the A2A resource's protected resource metadata
// (RFC 9728): the resource an OAuth token must be issued for to call an
// agent's endpoint (§10.6).
func (s *Server) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, oauth.ResourceMetadata(s.base(r)+hub.A2AResourcePath, s.base(r)))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// caller authenticates the request's bearer token: a person's (plu_…) or
// an agent's, static or OAuth. Nobody calls anonymously (§18).
func (s *Server) caller(ctx context.Context, r *http.Request) (tasks.Caller, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return tasks.Caller{}, hub.Errorf(hub.KindUnauthenticated, "no credential: send Authorization: Bearer with a Palaver token (plv_… for an agent, plu_… for a person)")
	}
	if strings.HasPrefix(token, hub.UserTokenPrefix) {
		u, _, err := s.hub.AuthenticatePerson(ctx, token)
		return tasks.Caller{Person: u}, err
	}
	// An OAuth token of this server serves its A2A endpoints as it does
	// its MCP ones — the same principal, the same scopes — when it was
	// issued for them: the A2A resource, as an MCP endpoint's token is for
	// that endpoint (§10.6). A static token serves every resource.
	c, err := s.hub.AuthenticateFor(ctx, token, s.base(r), hub.A2AResourcePath)
	return tasks.Caller{Agent: c}, err
}

// httpError answers a request that gets no JSON-RPC answer: a card or
// endpoint that does not exist (404, the same for an agent never exposed
// and one that is not there), a missing or bad credential (401 with
// WWW-Authenticate and a short body saying what is wrong, §2), or a token
// over its request rate (429 with Retry-After). Plain text, as the MCP
// face answers these.
func (s *Server) httpError(w http.ResponseWriter, r *http.Request, err error) {
	e := hub.AsError(err)
	status := httpx.Status(e.Kind)
	msg := e.Text(nil, nil)
	switch e.Kind {
	case hub.KindUnauthenticated:
		challenge := `Bearer realm="palaver", resource_metadata="` + s.base(r) + oauth.ResourceMetadataPath + hub.A2AResourcePath + `"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"` // RFC 6750: only when a credential came
		}
		w.Header().Set("WWW-Authenticate", challenge)
	case hub.KindRateLimited:
		if after, ok := e.Details["retry_after_s"]; ok {
			w.Header().Set("Retry-After", strings.TrimSpace(jsonText(after)))
		}
	case hub.KindInternal:
		trace := httpx.NewTrace()
		s.log.Error("a2a request failed", "trace", trace, "path", r.URL.Path, "err", e.Err)
		msg = "internal error (trace " + trace + "); retry later"
	}
	http.Error(w, msg, status)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
