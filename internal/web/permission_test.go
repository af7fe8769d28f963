package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/palaverhq/palaver/internal/channel"
)

// relay is palaver channel run in the test as Claude Code would run it,
// the test speaking JSON-RPC lines to it.
type relay struct {
	t    *testing.T
	in   io.Writer
	msgs chan map[string]any
	log  *syncWriter
}

func startRelay(t *testing.T, s *site, token string) *relay {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	vars := map[string]string{"PALAVER_URL": s.url + "/mcp/", "PALAVER_TOKEN": token, "PALAVER_INSTANCE": "desk", "XDG_STATE_HOME": t.TempDir()}
	r := &relay{t: t, in: inW, msgs: make(chan map[string]any, 100), log: &syncWriter{}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- channel.Run(ctx, channel.Options{Stdin: inR, Stdout: outW, Stderr: r.log, Getenv: func(k string) string { return vars[k] }})
		outW.Close()
	}()
	go func() {
		dec := json.NewDecoder(outR)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(r.msgs)
				return
			}
			r.msgs <- m
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("the channel ended with %v", err)
		}
	})
	r.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18",
		"clientInfo": map[string]any{"name": "claude-code", "version": "2.1.81"}, "capabilities": map[string]any{}}})
	r.next("initialize's answer", func(m map[string]any) bool { return m["id"] == 1.0 })
	r.send(map[string]any{"method": "notifications/initialized"})
	return r
}

func (r *relay) send(m map[string]any) {
	r.t.Helper()
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
}

// next is the next message that matches, others passed by, within 20 s.
func (r *relay) next(what string, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				r.t.Fatalf("waiting for %s: the channel ended; its log:\n%s", what, r.log)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			r.t.Fatalf("waiting for %s: nothing within 20 s; the channel's log:\n%s", what, r.log)
		}
	}
}

// verdict waits for the verdict notification of request and returns its
// behavior.
func (r *relay) verdict(request string) string {
	r.t.Helper()
	m := r.next("the verdict on "+request, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "notifications/claude/channel/permission" && p["request_id"] == request
	})
	p := m["params"].(map[string]any)
	if len(p) != 2 {
		r.t.Errorf("the verdict's params: %v, want request_id and behavior alone", p)
	}
	return p["behavior"].(string)
}

// syncWriter is a log written by one goroutine and read by another.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBrowserPermissionRelay (§19): Claude Code's permission prompt, sent
// to the agent's channel, waits under Approvals — live, naming the agent,
// its session, the tool and the preview — and the owner's Allow there, in
// Chromium, reaches the channel as the verdict notification with the
// prompt's request_id and behavior allow; a second prompt denied over REST
// comes back deny.
func TestBrowserPermissionRelay(t *testing.T) {
	chromium(t)
	s := newSite(t)
	s.hub.CreateUser(ctx, "alice", "Alice")
	s.accounts.SetPassword(ctx, "alice", "correct horse battery")
	_, token := s.agent(t, "alice/planner")
	r := startRelay(t, s, token)
	b := newTab(t, s, true)
	b.signIn("alice")
	b.open("/approvals", "approvals")

	r.send(map[string]any{"method": "notifications/claude/channel/permission_request", "params": map[string]any{
		"request_id": "tbxkq", "tool_name": "Bash", "description": "List the files", "input_preview": `{"command":"ls -la"}`}})
	card := `//article[contains(@class, 'approval-permission')][contains(., 'Bash')][contains(., 'List the files')][contains(., 'desk')][contains(., 'ls -la')][contains(., 'alice/planner')]`
	b.within(10*time.Second, "the permission request, live", chromedp.WaitVisible(chromedp.Search(card)))
	b.screenshot("approvals-permission")
	b.do(chromedp.Click(chromedp.Search(card+`//button[.='Allow']`)), b.at("approvals"))
	b.waitText(notice, "Allowed")
	if got := r.verdict("tbxkq"); got != "allow" {
		t.Errorf("the verdict on tbxkq: %s, want allow", got)
	}

	r.send(map[string]any{"method": "notifications/claude/channel/permission_request", "params": map[string]any{
		"request_id": "qwert", "tool_name": "Write", "description": "Write notes.md", "input_preview": `{"file_path":"notes.md"}`}})
	_, userToken, err := s.hub.MintUserToken(ctx, "alice", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	rest := func(method, path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, s.url+"/api/v1"+path, nil)
		req.Header.Set("Authorization", "Bearer "+userToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	b.within(10*time.Second, "the second request, live", chromedp.WaitVisible(chromedp.Search(`//article[contains(@class, 'approval-permission')][contains(., 'notes.md')]`)))
	var id string
	for _, a := range rest("GET", "/approvals")["approvals"].([]any) {
		if a := a.(map[string]any); a["request_id"] == "qwert" {
			id = a["id"].(string)
		}
	}
	if id == "" || !strings.HasPrefix(id, "perm_") {
		t.Fatalf("the second request is not among the approvals over REST")
	}
	if out := rest("POST", "/approvals/"+id+"/reject"); out["behavior"] != "deny" {
		t.Errorf("denying over REST: %v", out)
	}
	if got := r.verdict("qwert"); got != "deny" {
		t.Errorf("the verdict on qwert: %s, want deny", got)
	}
}
