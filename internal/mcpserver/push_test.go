package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/servertest"
)

// listenStream watches the HTTP response of a client's subscriptions/listen:
// ended is closed when the server ends it, and body holds what it sent.
type listenStream struct {
	next  http.RoundTripper
	mu    sync.Mutex
	body  bytes.Buffer
	ended chan struct{}
	once  sync.Once
}

func (l *listenStream) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err != nil || r.Header.Get("Mcp-Method") != "subscriptions/listen" {
		return resp, err
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, l: l}
	return resp, nil
}

func (l *listenStream) sent() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.body.String()
}

type watchedBody struct {
	io.ReadCloser
	l *listenStream
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.l.mu.Lock()
	b.l.body.Write(p[:n])
	b.l.mu.Unlock()
	if err != nil {
		b.l.once.Do(func() { close(b.l.ended) })
	}
	return n, err
}

// subscriber is an agent's SDK client subscribed to its inbox on the inbox
// profile: each notifications/resources/updated arrives on updated.
type subscriber struct {
	updated chan string // the URI of each
	stream  *listenStream
}

func (ts *testServer) subscribe(t *testing.T, name, uri string) *subscriber {
	t.Helper()
	sub := &subscriber{updated: make(chan string, 10), stream: &listenStream{next: servertest.Bearer{Token: ts.tokens[name]}, ended: make(chan struct{})}}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { sub.updated <- req.Params.URI },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.url + "/mcp/inbox/",
		HTTPClient: &http.Client{Transport: sub.stream}, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: modern})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("the inbox profile's capabilities %+v declare no resources.subscribe", caps)
	}
	waits := ts.waker.Waiters()
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// The server follows the inbox once its listen is subscribed.
	servertest.Parked(t, ts.waker, waits+1)
	return sub
}

// updated waits for one notifications/resources/updated of uri.
func (sub *subscriber) wait(t *testing.T, uri, after string) {
	t.Helper()
	select {
	case got := <-sub.updated:
		if got != uri {
			t.Fatalf("after %s: notifications/resources/updated for %s, want %s", after, got, uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("after %s: no notifications/resources/updated for %s", after, uri)
	}
}

// ended waits for the server to end the listen with its result.
func (sub *subscriber) ended(t *testing.T, after string) {
	t.Helper()
	select {
	case <-sub.stream.ended:
	case <-time.After(5 * time.Second):
		t.Fatalf("after %s: the listen stream goes on", after)
	}
	if sent := sub.stream.sent(); !strings.Contains(sent, `"result"`) || !strings.Contains(sent, "io.modelcontextprotocol/subscriptionId") {
		t.Fatalf("after %s: the listen stream ended without its result: %s", after, sent)
	}
}

// TestInboxPush: on /mcp/inbox/ the SDK's client subscribes to its inbox
// and is told of another agent's send and of its own acknowledgement; the
// stream ends cleanly when its token is revoked.
func TestInboxPush(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.clientAt(t, "/mcp/inbox/", "alice/planner", modern)
	reviewer := ts.clientAt(t, "/mcp/inbox/", "alice/reviewer", modern)
	thread := mustCall(t, reviewer, "create_thread", map[string]any{"title": "Review", "participants": []string{"planner"}})["threadId"]
	sub := ts.subscribe(t, "alice/planner", "palaver://inbox")

	msg := mustCall(t, reviewer, "send_message", map[string]any{"threadId": thread, "content": "please review"})["messageId"]
	sub.wait(t, "palaver://inbox", "another agent's send")
	mustCall(t, planner, "acknowledge", map[string]any{"messageId": msg})
	sub.wait(t, "palaver://inbox", "an acknowledgement")

	id := ts.tokenID(t, "alice/planner")
	if _, err := ts.hub.RevokeToken(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	sub.ended(t, "the token was revoked")

	// Its product's own URI is followed the same way.
	ts.agent(t, "alice/planner", "", nil)
	other := ts.subscribe(t, "alice/planner", "inbots://inbox")
	mustCall(t, reviewer, "send_message", map[string]any{"threadId": thread, "content": "and this"})
	other.wait(t, "inbots://inbox", "another agent's send")
}

// TestInboxPushShutdown: the server's shutdown ends the stream cleanly.
func TestInboxPushShutdown(t *testing.T) {
	ts := newTestServer(t)
	sub := ts.subscribe(t, "alice/planner", "palaver://inbox")
	ts.hub.Shutdown()
	sub.ended(t, "the server shut down")
}

// TestNoPush: the default and rooms profiles push nothing — no
// resources.subscribe, and subscriptions/listen is method-not-found — and
// the inbox profile refuses to follow anything but its inbox, and the
// older era's resources/subscribe.
func TestNoPush(t *testing.T) {
	ts := newTestServer(t)
	listen := func(path, uri string) map[string]any {
		t.Helper()
		meta := map[string]any{"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": "test", "version": "1"}}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
			"params": map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{uri}}, "_meta": meta}})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, b := ts.post(t, ctx, path, ts.tokens["alice/planner"], string(body), map[string]string{"MCP-Protocol-Version": modern, "Mcp-Method": "subscriptions/listen"})
		var out map[string]any
		// An SSE stream or JSON: the one message is on its data line.
		s := string(b)
		if i := strings.Index(s, "data: "); i >= 0 {
			s = s[i+len("data: "):]
		}
		if err := json.NewDecoder(strings.NewReader(s)).Decode(&out); err != nil {
			t.Fatalf("%s %s: %q", path, uri, b)
		}
		return out
	}
	for _, path := range []string{"/mcp/", "/mcp/rooms/"} {
		cs := ts.clientAt(t, path, "alice/planner", modern)
		if caps := cs.InitializeResult().Capabilities; caps.Resources != nil && caps.Resources.Subscribe {
			t.Errorf("%s declares resources.subscribe", path)
		}
		if e, _ := listen(path, "palaver://inbox")["error"].(map[string]any); e == nil || e["code"] != -32601.0 {
			t.Errorf("%s: subscriptions/listen answered %v, want method not found", path, e)
		}
	}
	if e, _ := listen("/mcp/inbox/", "inbots://agents")["error"].(map[string]any); e == nil || e["code"] != -32602.0 || !strings.Contains(e["message"].(string), "palaver://inbox") {
		t.Errorf("/mcp/inbox/: following inbots://agents answered %v, want invalid params naming the inbox", e)
	}
	old := ts.clientAt(t, "/mcp/inbox/", "alice/planner", older)
	if caps := old.InitializeResult().Capabilities; caps.Resources == nil || caps.Resources.Subscribe {
		t.Errorf("/mcp/inbox/ in %s declares %+v, want resources without subscribe", older, caps.Resources)
	}
	if err := old.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "palaver://inbox"}); err == nil || !strings.Contains(err.Error(), "method not found") {
		t.Errorf("resources/subscribe in %s: %v, want method not found", older, err)
	}
}

// tokenID is the id of the named token.
func (ts *testServer) tokenID(t *testing.T, name string) string {
	t.Helper()
	c, err := ts.hub.Authenticate(context.Background(), ts.tokens[name])
	if err != nil {
		t.Fatal(err)
	}
	return c.TokenID
}

// TestInboxPushTS runs testdata/push/inbox_listen.mjs: the official
// TypeScript client of the 2026-07-28 era (@modelcontextprotocol/client)
// listens to its inbox on /mcp/inbox/ and is told of another agent's send.
//
// Skipped unless PALAVER_MCP_CLIENT names a node_modules folder holding
// @modelcontextprotocol/client; node 20 or newer must be on PATH.
func TestInboxPushTS(t *testing.T) {
	modules := os.Getenv("PALAVER_MCP_CLIENT")
	if modules == "" {
		t.Skip("PALAVER_MCP_CLIENT is not set; it names a node_modules folder holding @modelcontextprotocol/client")
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(abs, "@modelcontextprotocol", "client", "package.json")); err != nil {
		t.Fatalf("PALAVER_MCP_CLIENT=%s holds no @modelcontextprotocol/client: %v", modules, err)
	}
	ts := newTestServer(t)
	dir := t.TempDir()
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "push", "inbox_listen.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inbox_listen.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "inbox_listen.mjs"))
	cmd.Env = append(os.Environ(), "PALAVER_URL="+ts.url, "TOKEN_A="+ts.tokens["alice/planner"], "TOKEN_B="+ts.tokens["alice/reviewer"])
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("node inbox_listen.mjs: %v\n%s", err, out)
	}
}
