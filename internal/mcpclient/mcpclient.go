// Package mcpclient is how a command reaches a Palaver server as one agent
// over MCP (DESIGN.md §12, §19): palaver call and wait, and palaver
// channel. It reads the client environment (PALAVER_URL, PALAVER_TOKEN,
// PALAVER_INSTANCE), connects with the bearer, says in words why a call
// failed — the server's own reason when it refused the token — and
// reconnects with backoff when the server goes away. It is a client over
// HTTP only: it imports no hub and no store.
package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultURL is the local server's MCP endpoint, PALAVER_URL's default.
const DefaultURL = "http://127.0.0.1:8420/mcp/"

// Backoff between attempts to reach a server that went away: it doubles
// from the first to the last.
const (
	FirstBackoff = 250 * time.Millisecond
	LastBackoff  = 10 * time.Second
)

// Env is how a client reaches a server: its MCP endpoint, the agent's
// token, the session's name, and — once the server refused the token —
// its words for why. Copies share what was refused.
type Env struct {
	URL, Token, Instance string
	refused              *refusal
}

// refusal is the server's words when it refused the token (a 401).
type refusal struct {
	mu  sync.Mutex
	why string
}

// NewEnv is an Env for url and token (and instance, "" for none).
func NewEnv(url, token, instance string) Env {
	return Env{URL: url, Token: token, Instance: instance, refused: &refusal{}}
}

// ReadEnv reads PALAVER_URL (default DefaultURL), PALAVER_TOKEN and the
// session's name (Instance). A missing token, or a person's token (plu_…)
// anywhere but the rooms profile, is refused saying what to do.
func ReadEnv(getenv func(string) string) (Env, error) {
	e := NewEnv(getenv("PALAVER_URL"), strings.TrimSpace(getenv("PALAVER_TOKEN")), Instance(getenv))
	if e.URL == "" {
		e.URL = DefaultURL
	}
	return e, e.check()
}

// Instance is the session's name from the environment: PALAVER_INSTANCE,
// or else CROWDEDSEA_INSTANCE, which scripts written for the default
// profile's seed product set ("" for none).
func Instance(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("PALAVER_INSTANCE")); v != "" {
		return v
	}
	return strings.TrimSpace(getenv("CROWDEDSEA_INSTANCE"))
}

// check refuses a token that cannot work here.
func (e Env) check() error {
	switch {
	case e.Token == "":
		return errors.New("PALAVER_TOKEN is not set: mint one with `palaver token mint --user OWNER --agent SLUG` and export PALAVER_TOKEN=plv_…")
	case strings.HasPrefix(e.Token, "plu_") && !RoomsEndpoint(e.URL):
		return errors.New("PALAVER_TOKEN holds a person's API token (plu_…), which serves the REST API and the rooms profile's user side (PALAVER_URL=…/mcp/rooms/); here the command speaks as an agent: mint an agent token with `palaver token mint --user OWNER --agent SLUG`")
	}
	return nil
}

// Refused is the server's words when it refused the token, "" until it
// did.
func (e Env) Refused() string {
	e.refused.mu.Lock()
	defer e.refused.mu.Unlock()
	return e.refused.why
}

// RoomsEndpoint reports whether url is the rooms profile's endpoint, whose
// user side takes a person's token and which has no event stream (§10.5).
func RoomsEndpoint(url string) bool {
	return strings.HasSuffix(strings.TrimSuffix(url, "/"), "/mcp/rooms")
}

// bearerTransport adds the Authorization header to every request, and
// keeps the server's words when it refuses the token.
type bearerTransport struct {
	token   string
	next    http.RoundTripper
	refused *refusal
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		t.refused.mu.Lock()
		t.refused.why = strings.TrimSpace(string(b))
		t.refused.mu.Unlock()
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, err
}

// Connect opens an MCP client session to the server, as client (nil: a
// client named palaver-cli).
func (e Env) Connect(ctx context.Context, client *mcp.Client) (*mcp.ClientSession, error) {
	if client == nil {
		client = mcp.NewClient(&mcp.Implementation{Name: "palaver-cli", Version: "1"}, nil)
	}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             e.URL,
		HTTPClient:           &http.Client{Transport: bearerTransport{token: e.Token, next: http.DefaultTransport, refused: e.refused}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return nil, e.Err(err)
	}
	return s, nil
}

// Err explains a failure to talk to the server.
func (e Env) Err(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"):
		return fmt.Errorf("cannot reach a Palaver server at %s: is `palaver serve` running there? (set PALAVER_URL to its /mcp/ URL)", e.URL)
	case strings.Contains(msg, "Unauthorized"), strings.Contains(msg, "401"):
		why := "it is not a working agent token"
		if r := e.Refused(); r != "" {
			why = r
		}
		return fmt.Errorf("the server at %s refused the token in PALAVER_TOKEN: %s (mint one on the agent's dashboard page or with `palaver token mint`)", e.URL, why)
	case strings.Contains(msg, "unknown tool"):
		return errors.New("unknown tool; list the tools with `palaver tools`")
	case strings.Contains(msg, "Not Found"):
		return fmt.Errorf("nothing answers MCP at %s (404): PALAVER_URL must be the server's MCP endpoint, like %s", e.URL, DefaultURL)
	}
	return fmt.Errorf("talking to %s: %w", e.URL, err)
}

// TakesInstance reports whether the tool's input schema has an instance
// argument.
func TakesInstance(t *mcp.Tool) bool {
	if schema, ok := t.InputSchema.(map[string]any); ok {
		props, _ := schema["properties"].(map[string]any)
		return props["instance"] != nil
	}
	return false
}

// CallTool calls a tool, adding the session's name as instance when the
// tool takes one and args do not name one.
func CallTool(ctx context.Context, s *mcp.ClientSession, e Env, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if e.Instance != "" && args["instance"] == nil {
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			return nil, e.Err(err)
		}
		if i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == name }); i >= 0 && TakesInstance(tools.Tools[i]) {
			args["instance"] = e.Instance
		}
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil && strings.Contains(err.Error(), "unknown tool") {
		return nil, fmt.Errorf("no tool is named %q; list the tools with `palaver tools`", name)
	}
	if err != nil {
		return nil, e.Err(err)
	}
	return r, nil
}

// ResultJSON is a result's structured content, or its text.
func ResultJSON(r *mcp.CallToolResult) []byte {
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			return b
		}
	}
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return []byte(t.Text)
		}
	}
	return []byte("{}")
}

// LatestCursor is whoami's latest_cursor.
func LatestCursor(ctx context.Context, s *mcp.ClientSession, e Env) (string, error) {
	r, err := CallTool(ctx, s, e, "whoami", map[string]any{})
	if err != nil {
		return "", err
	}
	var me struct {
		LatestCursor string `json:"latest_cursor"`
	}
	if r.IsError || json.Unmarshal(ResultJSON(r), &me) != nil || me.LatestCursor == "" {
		return "", errors.New("whoami returned no latest_cursor: " + string(ResultJSON(r)))
	}
	return me.LatestCursor, nil
}

// Reconnect opens a new session after lost ended the last one, trying
// with backoff until the server answers, it refuses the token, or ctx
// ends; it says so on log, each line starting with who and the first
// ending with what the caller goes on with (like "to go on after cursor
// C").
func Reconnect(ctx context.Context, e Env, client *mcp.Client, log io.Writer, who string, lost error, goOn string) (*mcp.ClientSession, error) {
	fmt.Fprintf(log, "%s: lost the server (%s); reconnecting, %s\n", who, lost, goOn)
	backoff := FirstBackoff
	for {
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		s, err := e.Connect(ctx, client)
		if err == nil {
			fmt.Fprintf(log, "%s: reconnected to %s\n", who, e.URL)
			return s, nil
		}
		if e.Refused() != "" {
			return nil, err
		}
		backoff = min(2*backoff, LastBackoff)
		fmt.Fprintf(log, "%s: still cannot reach the server (%s); next try in %v\n", who, err, backoff)
	}
}
