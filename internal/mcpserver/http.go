package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
	"github.com/palaverhq/palaver/internal/oauth"
)

// maxBody bounds an MCP request body (§15).
const maxBody = 4 << 20

// Register mounts each profile at its exact path, with and without the
// trailing slash (some connectors strip it, and a redirect would drop the
// POST or its Authorization header, §10.1), with its protected resource
// metadata; any other path under /mcp/ is 404, never a profile the client
// did not ask for (§10.5).
func (s *Server) Register(mux *http.ServeMux) {
	for _, p := range s.profiles {
		h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			if p.people != nil && personFrom(r.Context()) != nil {
				return p.people.mcp
			}
			return p.mcp
		}, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			JSONResponse:                 true,
			PropagateRequestCancellation: true,
			MaxRequestBodyBytes:          maxBody,
			Logger:                       quiet(s.log),
			DisableLocalhostProtection:   true, // knownHost checks every request's Host first

		})
		var sdk http.Handler = h
		if !s.noLean {
			sdk = s.lean(p, h)
		}
		endpoint := s.knownHost(s.cors("POST", s.alignVersionHeader(s.bearer(p, s.oneMessage(sdk)))))
		mux.Handle(p.path, endpoint)
		mux.Handle(p.path+"/{$}", endpoint)
		// Each form of the metadata's path names the same form of the
		// resource, so a client that connected to either finds its own.
		// The root's metadata, the server's own, is the OAuth face's.
		mux.Handle(metadataPath+p.path, s.knownHost(s.cors("GET, HEAD", s.protectedResourceMetadata(p.path))))
		mux.Handle(metadataPath+p.path+"/", s.knownHost(s.cors("GET, HEAD", s.protectedResourceMetadata(p.path+"/"))))
	}
	var paths []string
	for _, p := range s.profiles {
		paths = append(paths, p.path+"/")
	}
	mux.HandleFunc("/mcp/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no MCP profile is served at "+r.URL.Path+"; the profiles are at "+strings.Join(paths, ", "), http.StatusNotFound)
	})
}

// metadataPath is where RFC 9728 protected resource metadata lives; a
// profile's is this path followed by the profile's own.
const metadataPath = oauth.ResourceMetadataPath

// base is the public base URL: configured, or this request's own.
func (s *Server) base(r *http.Request) string { return httpx.BaseURL(s.baseURL, r) }

// knownHost refuses, before anything else, a request for a host the server
// does not know it is served as (httpx.KnownHost, the dashboard's rule):
// the base URL's host, or an address or localhost. So a name merely pointed
// here (DNS rebinding, a forged Host) never reaches a tool and is never
// reflected into WWW-Authenticate, the resource metadata or the allowed
// origins (§15). It stands in for the SDK's own check, which refuses a
// proxy on the same machine that forwards the public Host.
func (s *Server) knownHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.KnownHost(s.baseHost, r.Host) {
			fix := "use its address, or start it with --base-url set to its public URL"
			if s.baseURL != "" {
				fix = "use " + s.baseURL + " (its --base-url) or its address"
			}
			http.Error(w, fmt.Sprintf("this server is not served as %q: %s", r.Host, fix), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ResourcePaths are the paths of the MCP endpoints, the default profile's
// first: the resources an OAuth token may be for (§10.6).
func (s *Server) ResourcePaths() []string {
	var out []string
	for _, p := range s.profiles {
		out = append(out, p.path+"/")
	}
	return out
}

// protectedResourceMetadata serves RFC 9728 metadata for a profile's
// endpoint at path.
func (s *Server) protectedResourceMetadata(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		base := s.base(r)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauth.ResourceMetadata(base+path, base))
	})
}

// authKey holds what bearer learned of a request (authed).
type authKey struct{}

// authed is what bearer learned of a request: the token it authenticated
// with, whose that is, and the request's own context, which ends when the
// client hangs up, for wait_for_messages: in the older protocol era the
// SDK does not cancel a handler on hang-up (research §2.6 b). All of it is
// one value of one copy of the request, which a parked wait holds for as
// long as it waits (§17).
type authed struct {
	tokenID string
	caller  *hub.Caller // an agent's token
	person  *hub.User   // a person's, on a profile's people's side
	request context.Context
}

func authedFrom(ctx context.Context) *authed {
	if a, _ := ctx.Value(authKey{}).(*authed); a != nil {
		return a
	}
	return &unauthed
}

// unauthed is what a request that bearer did not see carries.
var unauthed authed

func callerFrom(ctx context.Context) *hub.Caller { return authedFrom(ctx).caller }

// personFrom is the person whose token a request of a profile's people's
// side carries (nil for an agent's).
func personFrom(ctx context.Context) *hub.User { return authedFrom(ctx).person }

// requestContext is the HTTP request's own context, if bearer saw it.
func requestContext(ctx context.Context) context.Context { return authedFrom(ctx).request }

// bearer authenticates every MCP request (§2). A missing, malformed,
// mistyped, unknown, revoked, expired or archived credential gets 401 with
// WWW-Authenticate naming the resource metadata (RFC 9728) and a short
// plain-text body saying what is wrong, never a JSON-RPC error. A profile
// with a people's side takes a person's token (plu_…) too.
func (s *Server) bearer(p *profile, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r) // the SDK answers GET and DELETE with 405
			return
		}
		// The scheme is case-insensitive (RFC 7235).
		scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		hasBearer := strings.EqualFold(scheme, "Bearer")
		if !hasBearer {
			token = ""
		}
		token = strings.TrimSpace(token)
		var c *hub.Caller
		var u *hub.User
		var tokenID string
		var err error
		if p.people != nil && strings.HasPrefix(token, hub.UserTokenPrefix) {
			u, tokenID, err = s.hub.AuthenticatePerson(r.Context(), token)
		} else if c, err = s.hub.AuthenticateFor(r.Context(), token, s.base(r), r.URL.Path); err == nil {
			tokenID = c.TokenID
		}
		if err != nil {
			e := hub.AsError(err)
			if e.Kind == hub.KindRateLimited { // answered by the tool or resource asked for (noCaller)
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), refusedKey{}, err)))
				return
			}
			if e.Kind != hub.KindUnauthenticated {
				s.log.Error("authenticating", "err", err)
				http.Error(w, "internal error; retry later", http.StatusInternalServerError)
				return
			}
			challenge := `Bearer resource_metadata="` + s.base(r) + metadataPath + r.URL.Path + `", scope="` + strings.Join(hub.AllScopes, " ") + `"`
			if hasBearer && token != "" {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, e.Text(nil, dashboardWay), http.StatusUnauthorized)
			return
		}
		a := &authed{tokenID: tokenID, caller: c, person: u, request: r.Context()}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, a)))
	})
}

// oneMessage refuses a body that is not exactly one JSON value — a
// message or a batch — with only whitespace after it: a JSON-RPC parse
// error and HTTP 400, so a second message glued to the first is never
// silently dropped (the SDK's decoder stops after the first value, §15),
// and a message that gives a name twice (in itself or its params), or has
// an id and no method (methodless), is an invalid request, never read by
// its last name nor answered 202. A batch spends one request of the token's rate for each message in it
// beyond the first (authentication spent that one); over the rate, the
// whole batch is 429 with Retry-After. A body over maxBody goes on whole,
// for the SDK's own 413.
func (s *Server) oneMessage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := readAtMost(r.Body, r.ContentLength, maxBody+1)
		if testHookBodyRead != nil {
			testHookBodyRead(body)
		}
		if err == nil && len(body) <= maxBody && !json.Valid(body) {
			msg := "parse error: the body must be one JSON-RPC message, or one batch, and nothing after it"
			if derr := json.Unmarshal(body, new(json.RawMessage)); derr != nil && strings.Contains(derr.Error(), "max depth") {
				msg = "parse error: the body nests arrays or objects deeper than JSON readers take (10,000 levels); send a flatter message"
			}
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, msg)
			return
		}
		if err == nil && len(body) <= maxBody {
			if again := input.RepeatedName(body, 2); again != "" {
				writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the name %q is given more than once in one object; give each name once", hub.Preview(again, 60)))
				return
			}
			if id, why := methodless(body); why != "" {
				writeRPCErrorFor(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, why)
				return
			}
		}
		if tokenID := authedFrom(r.Context()).tokenID; tokenID != "" && err == nil && len(body) <= maxBody && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
			var batch []json.RawMessage
			if json.Unmarshal(body, &batch) == nil && len(batch) > 1 {
				if err := s.hub.SpendMore(tokenID, len(batch)-1); err != nil {
					e := hub.AsError(err)
					if e.Kind != hub.KindRateLimited {
						s.log.Error("rate of a batch", "err", err)
						http.Error(w, "internal error; retry later", http.StatusInternalServerError)
						return
					}
					w.Header().Set("Retry-After", fmt.Sprint(e.Details["retry_after_s"]))
					writeRPCError(w, http.StatusTooManyRequests, -32000, fmt.Sprintf("rate_limited: a batch of %d calls: %s", len(batch), e.Text(nil, nil)))
					return
				}
			}
		}
		if err == nil && len(body) <= maxBody {
			r.Body = &readBody{Reader: bytes.NewReader(body), whole: body, rest: r.Body}
		} else {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		}
		next.ServeHTTP(w, r)
	})
}

// readBody is a request body oneMessage has read to its end: whole, for
// the lean path to take without reading it again, and a reader of it for
// the SDK.
type readBody struct {
	*bytes.Reader
	whole []byte
	rest  io.ReadCloser // the request's own body, read to its end
}

func (b *readBody) Close() error { return b.rest.Close() }

// testHookBodyRead, when set, is handed each body oneMessage reads.
var testHookBodyRead func(body []byte)

// readAtMost reads r to its end but at most limit bytes, as
// io.ReadAll(io.LimitReader(r, limit)) does; a body that announces its
// length (size) below limit is read into one buffer of that length, not
// grown from 512 bytes.
func readAtMost(r io.Reader, size, limit int64) ([]byte, error) {
	if size <= 0 || size >= limit {
		return io.ReadAll(io.LimitReader(r, limit))
	}
	b := make([]byte, 0, size+1) // one byte more, to see the end without growing
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) { // longer than it announced
			more, err := io.ReadAll(io.LimitReader(r, limit-int64(len(b))))
			return append(b, more...), err
		}
	}
}

// writeRPCError answers with a JSON-RPC error that belongs to no request.
func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	writeRPCErrorFor(w, status, jsonrpc.ID{}, code, msg)
}

// writeRPCErrorFor answers with a JSON-RPC error for the message with id
// (none: the zero ID).
func writeRPCErrorFor(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, msg string) {
	b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// methodless finds, in a body of valid JSON, a message with an id and no
// method, and says why it is refused (with its id when it is to be
// answered as a request), or "". The SDK decodes such a message as a
// response, and a body of responses and notifications is answered 202
// with nothing done — silence for a request that lost its method. So one
// with neither result nor error, no message at all, is an invalid request;
// and a response is refused too, as this stateless server sends no request
// that one could answer (the transport lets a server refuse what it
// cannot accept with 400). A notification (no id) goes on to the SDK.
func methodless(body []byte) (jsonrpc.ID, string) {
	body = bytes.TrimLeft(body, " \t\r\n")
	var msgs []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return jsonrpc.ID{}, ""
		}
	} else {
		msgs = []json.RawMessage{body}
	}
	for _, raw := range msgs {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method json.RawMessage `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &m) != nil || len(m.ID) == 0 || string(m.ID) == "null" || len(m.Method) > 0 {
			continue
		}
		if len(m.Result) > 0 || len(m.Error) > 0 {
			return jsonrpc.ID{}, "invalid request: this message is a response (an id with a result or an error), but this server sends no requests, so it answers nothing; send requests, which name a method"
		}
		var v any
		json.Unmarshal(m.ID, &v)
		id, _ := jsonrpc.MakeID(v)
		return id, "invalid request: this message has an id but no method, so it is neither a request nor a response; a request names its method, like {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{…}}"
	}
	return jsonrpc.ID{}, ""
}

// alignVersionHeader is a deliberate leniency (§10.1, research §2.6 a): some
// clients send an older MCP-Protocol-Version header with a 2026-07-28 body;
// the header is set to the body's version before the SDK sees it, and each
// time is logged. Every other header rule stays strict.
func (s *Server) alignVersionHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Mcp-Protocol-Version")
		if r.Method != http.MethodPost || h == "" || h >= "2026-07-28" {
			next.ServeHTTP(w, r)
			return
		}
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(b, &m) == nil {
			if v, _ := m.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string); v >= "2026-07-28" {
				s.log.Info("aligned MCP-Protocol-Version header to the body", "header", h, "body", v, "agent_ua", r.UserAgent())
				r.Header.Set("Mcp-Protocol-Version", v)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// cors answers preflight before authentication, advertising the methods
// next serves, and checks Origin against the allowlist: the base URL's
// origin, configured origins, and loopback (local inspectors). A bad
// Origin gets 403 (§10.1).
func (s *Server) cors(methods string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !s.originAllowed(r, origin) {
			http.Error(w, "origin "+origin+" is not allowed; add it with --origin", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) originAllowed(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
		return true
	}
	if b, err := url.Parse(s.base(r)); err == nil && b.Scheme == u.Scheme && b.Host == u.Host {
		return true
	}
	return slices.Contains(s.origins, strings.TrimSuffix(origin, "/"))
}
