// Package mcpserver is Palaver's MCP face (DESIGN.md §10): a stateless
// streamable-HTTP endpoint at /mcp/ (and /mcp) serving both protocol eras
// through the official Go SDK, with bearer authentication; each profile's
// tools (a handler typed by its arguments, shared between profiles where
// they do the same), resources, prompts and server instructions.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/reach"
	"github.com/palaverhq/palaver/internal/rooms"
	"github.com/palaverhq/palaver/internal/search"
)

// Options configure New.
type Options struct {
	Hub *hub.Hub
	// Search is search_messages over the hub.
	Search *search.Finder
	// Projects is the project tools of items, requests and images.
	Projects *projects.Projects
	// Rooms is the rooms profile's reads: rooms, work, context.
	Rooms *rooms.Rooms
	// Reach is whom agents and people may reach: contacts, peers, contact requests.
	Reach *reach.Reach
	// Permissions is request_permission's desk (§19).
	Permissions *permissions.Desk
	Logger      *slog.Logger
	// BaseURL is the public URL (scheme://host[:port]) used in the
	// WWW-Authenticate resource_metadata and the protected resource
	// metadata. "" derives it from each request's Host.
	BaseURL string
	// Origins are extra browser origins allowed besides BaseURL's and
	// loopback ones.
	Origins []string
	// Metrics receives palaver_tool_calls_seconds{tool,outcome} (§14);
	// nil: none.
	Metrics prometheus.Registerer
}

// Server is the MCP face: its profiles, each at its own path.
type Server struct {
	hub      *hub.Hub
	finder   *search.Finder
	boards   *projects.Projects
	rooms    *rooms.Rooms
	reach    *reach.Reach
	desk     *permissions.Desk
	log      *slog.Logger
	baseURL  string
	baseHost string // the base URL's host, "" without one
	origins  []string
	profiles []*profile   // the default profile first
	noLean   bool         // every call through the SDK (tests compare both paths)
	leans    atomic.Int64 // calls the lean path served
	calls    *prometheus.HistogramVec
}

// setBaseURL sets the public base URL and the host it names.
func (s *Server) setBaseURL(base string) {
	s.baseURL, s.baseHost = strings.TrimSuffix(base, "/"), ""
	if u, err := url.Parse(s.baseURL); err == nil {
		s.baseHost = u.Host
	}
}

// New builds the MCP server and its profiles.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{hub: o.Hub, finder: o.Search, boards: o.Projects, desk: o.Permissions, reach: o.Reach, rooms: o.Rooms, log: o.Logger, origins: o.Origins,
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palaver_tool_calls_seconds",
			Help:    "MCP tool calls by tool and outcome (ok, refused, error), and how long each took in the server.",
			Buckets: []float64{.0001, .00025, .0005, .00075, .001, .0015, .002, .003, .005, .0075, .01, .025, .05, .1, .25, .5, 1, 5, 15, 30, 60},
		}, []string{"tool", "outcome"})}
	s.setBaseURL(o.BaseURL)
	if o.Metrics != nil {
		if err := o.Metrics.Register(s.calls); err != nil {
			return nil, err
		}
	}
	for _, spec := range []profileSpec{s.defaultProfile(), s.inboxProfile(), s.roomsProfile()} {
		p, err := s.newProfile(spec)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", spec.name, err)
		}
		s.profiles = append(s.profiles, p)
	}
	return s, nil
}

// quiet passes on the SDK's log records at warning level and above,
// except that what the SDK logs at error level about a request the client
// got wrong (an initialize in the 2026-07-28 era, a method before the
// handshake) is a refusal, logged at info like the faces' own refusals.
func quiet(l *slog.Logger) *slog.Logger {
	return slog.New(sdkLog{l.Handler()})
}

// clientMistakes are the messages the SDK logs at error level about a
// client's request, not about the server.
var clientMistakes = []string{
	"method removed in the new protocol",
	"method invalid during initialization",
	"duplicate initialize request",
	"initialized before initialize",
	"duplicate initialized notification",
}

type sdkLog struct{ next slog.Handler }

func (h sdkLog) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && h.next.Enabled(ctx, level)
}

func (h sdkLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && slices.Contains(clientMistakes, r.Message) {
		r.Level = slog.LevelInfo
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.next.Handle(ctx, r)
}

func (h sdkLog) WithAttrs(as []slog.Attr) slog.Handler { return sdkLog{h.next.WithAttrs(as)} }
func (h sdkLog) WithGroup(name string) slog.Handler    { return sdkLog{h.next.WithGroup(name)} }

// LeanCalls is how many tool calls the lean path has served (§17).
func (s *Server) LeanCalls() int64 { return s.leans.Load() }

// Version is the default profile's serverInfo.version.
func (s *Server) Version() string { return s.profiles[0].impl.Version }

// buildName is whoami.server_build: the binary's version and VCS revision
// (the same words as `palaver version` and the start-up log), then the
// profile's surface version.
func buildName(version string) string {
	return "palaver " + build.Current().String() + ", tools " + version
}

// callTool runs one tool call for the SDK and the lean path alike: it finds
// the caller put in the context by the bearer middleware, checks the tool's
// scope, runs the handler and maps its outcome — a value, a Refusal or an
// error — to a result (§10.2). Each call is counted with its outcome and
// time (§14).
func (s *Server) callTool(ctx context.Context, p *profile, d toolDef, args json.RawMessage) (*mcp.CallToolResult, error) {
	t := s.beginCall(ctx, p, d)
	if err := t.allowed(ctx); err != nil {
		return t.refuse(ctx, err)
	}
	v, err := d.handler(ctx, t.c, args)
	return t.end(ctx, v, err)
}

// toolCall is a tool call begun and not yet answered.
type toolCall struct {
	s     *Server
	d     toolDef
	c     *call
	start time.Time
}

func (s *Server) beginCall(ctx context.Context, p *profile, d toolDef) *toolCall {
	return &toolCall{s: s, d: d, start: time.Now(),
		c: &call{srv: s, prof: p, tool: d.tool.Name, caller: callerFrom(ctx), person: personFrom(ctx)}}
}

// allowed is the call's caller, of the tool's side, with the tool's scope.
func (t *toolCall) allowed(ctx context.Context) error {
	switch {
	case t.d.people && t.c.person == nil, !t.d.people && t.c.caller == nil:
		return noCaller(ctx)
	case !t.d.people:
		return t.c.caller.Require(t.d.scope)
	}
	return nil
}

// refuse answers a call not allowed.
func (t *toolCall) refuse(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	defer t.count("error")
	return t.c.toolError(ctx, err)
}

// end answers the call with what its handler returned.
func (t *toolCall) end(ctx context.Context, v any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		var r *hub.Refusal
		if errors.As(err, &r) {
			defer t.count("refused")
			if t.c.prof.refusalErrors {
				return t.c.refusalError(ctx, r)
			}
			return t.c.refusalResult(ctx, r)
		}
		defer t.count("error")
		return t.c.toolError(ctx, err)
	}
	defer t.count("ok")
	return result(v)
}

func (t *toolCall) count(outcome string) {
	t.s.calls.WithLabelValues(t.d.tool.Name, outcome).Observe(time.Since(t.start).Seconds())
}
