package a2a_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// goClient is the A2A Go SDK's client for the card, sending token through
// the card's bearer scheme.
func goClient(t *testing.T, card *a2a.AgentCard, token string) (*a2aclient.Client, context.Context) {
	t.Helper()
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("test", "bearer", a2aclient.AuthCredential(token))
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{Polling: true}),
		a2aclient.WithInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c, a2aclient.WithSessionID(ctx, "test")
}

func textMessage(contextID, text string) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
	m.ContextID = contextID
	return &a2a.MessageSendParams{Message: m}
}

func textOf(parts a2a.ContentParts) string {
	var out []string
	for _, p := range parts {
		if tp, ok := p.(a2a.TextPart); ok {
			out = append(out, tp.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestGoClient: the A2A Go SDK's client finds an exposed agent by its
// card, sends with a bearer token over message/stream, and sees the task
// go submitted → working as the Palaver agent starts processing over MCP →
// completed with the agent's reply as its artifact; a second message with
// the same contextId lands in the same conversation, and tasks/get and
// tasks/cancel follow the agent's inbox (§5, §18).
func TestGoClient(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, ts.url+"/a2a/alice/reviewer")
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "alice/reviewer" || card.URL != ts.url+"/a2a/alice/reviewer" || card.Description != "the alice/reviewer agent" || !card.Capabilities.Streaming {
		t.Errorf("card: %+v", card)
	}
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID+"="+s.Name+": "+s.Description)
	}
	if diff := cmp.Diff([]string{"review-code=Review code: reads a diff and says what to change", "triage=Triage: sorts bug reports"}, skills); diff != "" {
		t.Errorf("card skills (-want +got):\n%s", diff)
	}
	if s, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok || s.Scheme != "bearer" {
		t.Errorf("bearer scheme: %#v", card.SecuritySchemes["bearer"])
	}
	if s, ok := card.SecuritySchemes["oauth"].(a2a.OAuth2SecurityScheme); !ok || s.Oauth2MetadataURL != ts.url+"/.well-known/oauth-authorization-server" {
		t.Errorf("oauth scheme: %#v", card.SecuritySchemes["oauth"])
	}

	client, cctx := goClient(t, card, ts.tokens["alice/planner"])
	events := make(chan a2a.Event, 16)
	go func() {
		defer close(events)
		for ev, err := range client.SendStreamingMessage(cctx, textMessage("", "Please review PR 12")) {
			if err != nil {
				t.Errorf("stream: %v", err)
				return
			}
			events <- ev
		}
	}()
	next := func() a2a.Event {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the stream ended early")
			}
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no stream event within 10s")
		}
		return nil
	}
	first, ok := next().(*a2a.Task)
	if !ok || first.Status.State != a2a.TaskStateSubmitted || textOf(first.History[0].Parts) != "Please review PR 12" {
		t.Fatalf("first event: %+v; want the submitted task", first)
	}

	agent := ts.mcpAgent(t, "alice/reviewer")
	inbox := tool(t, agent, "check_inbox", map[string]any{})
	rows := inbox["messages"].([]any)
	row := rows[0].(map[string]any)
	if len(rows) != 1 || row["message_id"] != string(first.ID) || row["conversation_id"] != first.ContextID {
		t.Fatalf("the reviewer's inbox: %v; want the task's message %s", inbox, first.ID)
	}
	tool(t, agent, "acknowledge", map[string]any{"message_id": string(first.ID), "outcome": "processing"})
	if ev, ok := next().(*a2a.TaskStatusUpdateEvent); !ok || ev.Status.State != a2a.TaskStateWorking || ev.Final {
		t.Fatalf("after processing started: %+v; want working", ev)
	}
	tool(t, agent, "send_message", map[string]any{"conversation_id": first.ContextID, "body": "Looks good; one nit in store.go."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": string(first.ID)})
	art, ok := next().(*a2a.TaskArtifactUpdateEvent)
	if !ok || textOf(art.Artifact.Parts) != "Looks good; one nit in store.go." {
		t.Fatalf("after the reply: %+v; want the reply as an artifact", art)
	}
	done, ok := next().(*a2a.TaskStatusUpdateEvent)
	if !ok || done.Status.State != a2a.TaskStateCompleted || !done.Final || textOf(done.Status.Message.Parts) != "Looks good; one nit in store.go." {
		t.Fatalf("after the acknowledgement: %+v; want completed, final, with the reply", done)
	}
	if _, open := <-events; open {
		t.Error("the stream went on after the final status")
	}

	got, err := client.GetTask(cctx, &a2a.TaskQueryParams{ID: first.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || textOf(got.Artifacts[0].Parts) != "Looks good; one nit in store.go." {
		t.Fatalf("tasks/get: %+v, %v; want completed with the reply", got, err)
	}

	// A second message in the same context: a new task in the same
	// conversation, following the agent's inbox by tasks/get.
	res, err := client.SendMessage(cctx, textMessage(first.ContextID, "Which nit?"))
	if err != nil {
		t.Fatal(err)
	}
	second, ok := res.(*a2a.Task)
	if !ok || second.ContextID != first.ContextID || second.ID == first.ID || second.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("second message: %+v; want a new submitted task in %s", res, first.ContextID)
	}
	tool(t, agent, "acknowledge", map[string]any{"message_id": string(second.ID), "outcome": "processing"})
	if got, err := client.GetTask(cctx, &a2a.TaskQueryParams{ID: second.ID}); err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("second task while processing: %+v, %v; want working", got, err)
	}
	if _, err := client.CancelTask(cctx, &a2a.TaskIDParams{ID: second.ID}); err == nil || !strings.Contains(err.Error(), "cannot be canceled") {
		t.Errorf("cancel while working: %v; want not cancelable", err)
	}
	third, err := client.SendMessage(cctx, textMessage("", "Never mind the nit."))
	if err != nil {
		t.Fatal(err)
	}
	canceled, err := client.CancelTask(cctx, &a2a.TaskIDParams{ID: third.(*a2a.Task).ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled || canceled.ContextID != first.ContextID {
		t.Fatalf("cancel while waiting: %+v, %v; want canceled", canceled, err)
	}
	inbox = tool(t, agent, "check_inbox", map[string]any{})
	if n := inbox["total"]; n != 1.0 {
		t.Errorf("the reviewer's inbox after the cancel: %v; want only the second task", inbox)
	}
}

// TestRefusalsAndReview: a caller without reach is refused with the
// consent step and a trace id; an agent in review mode keeps the task
// working until its owner approves the reply; an unexposed agent's card and
// endpoint answer 404, and no call is anonymous (§3, §7, §18).
func TestRefusalsAndReview(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, ts.url+"/a2a/alice/reviewer")
	if err != nil {
		t.Fatal(err)
	}
	stranger, sctx := goClient(t, card, ts.tokens["bob/helper"])
	_, err = stranger.SendMessage(sctx, textMessage("", "hello"))
	if err == nil || !strings.Contains(err.Error(), "contact: ") || !strings.Contains(err.Error(), "(trace tr_") {
		t.Errorf("bob's helper, no contact: %v; want the contact refusal with a trace", err)
	}
	_, err = stranger.GetTask(sctx, &a2a.TaskQueryParams{ID: "msg_nothing"})
	if err == nil || !strings.Contains(err.Error(), "task not found") {
		t.Errorf("a task of no one's: %v; want task not found", err)
	}

	for _, path := range []string{"/a2a/alice/planner" + "/.well-known/agent-card.json", "/a2a/alice/nobody/.well-known/agent-card.json", "/a2a/nobody"} {
		if status, _, body := get(t, "GET", ts.url+path, "", ""); status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s; want 404", path, status, body)
		}
	}
	send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`
	if status, _, body := get(t, "POST", ts.url+"/a2a/alice/planner", ts.tokens["alice"], send); status != http.StatusNotFound {
		t.Errorf("POST to an unexposed agent: %d %s; want 404", status, body)
	}
	status, h, body := get(t, "POST", ts.url+"/a2a/alice/reviewer", "", send)
	if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer ") || !strings.Contains(body, "Authorization: Bearer") {
		t.Errorf("no token: %d %q %s; want 401 saying what to send", status, h.Get("WWW-Authenticate"), body)
	}
	if status, _, body := get(t, "GET", ts.url+"/a2a/alice", "", ""); status != http.StatusOK || !strings.Contains(body, `"name":"alice/reviewer"`) || strings.Contains(body, "alice/planner") {
		t.Errorf("alice's directory: %d %s; want only the reviewer's card", status, body)
	}
	if status, _, body := get(t, "POST", ts.url+"/a2a/alice/reviewer", ts.tokens["alice"], `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"role":"user","messageId":"m2","parts":[{"kind":"file","file":{"uri":"https://example.com/a.png"}}]}}}`); status != http.StatusOK || !strings.Contains(body, "only text parts are taken") {
		t.Errorf("a file part: %d %s; want a clear refusal", status, body)
	}

	// Review: the person alice asks her own reviewer, which is in review
	// mode; its reply waits for her, and so does the task.
	if _, err := ts.hub.SetAgentMode(ctx, "alice/reviewer", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	client, cctx := goClient(t, card, ts.tokens["alice"])
	res, err := client.SendMessage(cctx, textMessage("", "What changed today?"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	agent := ts.mcpAgent(t, "alice/reviewer")
	tool(t, agent, "acknowledge", map[string]any{"message_id": string(task.ID), "outcome": "processing"})
	sent := tool(t, agent, "send_message", map[string]any{"conversation_id": task.ContextID, "body": "Two fixes landed."})
	if sent["status"] != "held" {
		t.Fatalf("the reply: %v; want held", sent)
	}
	tool(t, agent, "acknowledge", map[string]any{"message_id": string(task.ID)})
	if got, err := client.GetTask(cctx, &a2a.TaskQueryParams{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateWorking || len(got.Artifacts) != 0 {
		t.Fatalf("reply held: %+v, %v; want working, no artifact", got, err)
	}
	alice, _ := ts.hub.User(ctx, "alice")
	if _, err := ts.hub.DecideHeld(ctx, alice, sent["message_id"].(string), hub.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	got, err := client.GetTask(cctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || textOf(got.Artifacts[0].Parts) != "Two fixes landed." {
		t.Fatalf("approved: %+v, %v; want completed with the reply", got, err)
	}
	prov := got.Artifacts[0].Metadata["palaver"].(map[string]any)["provenance"].(map[string]any)
	if prov["authority"] != hub.AuthorityApproved {
		t.Errorf("the reply's provenance: %v; want owner_approved", prov)
	}
}
