package a2a_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/servertest"
)

// TestBlockingSendAndResubscribe: message/send with blocking: true
// answers once the agent has acknowledged, with the completed task; and
// tasks/resubscribe streams a task already made, starting with it as it
// stands (§18).
func TestBlockingSendAndResubscribe(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		status, _, body := get(t, "POST", ts.url+"/a2a/alice/reviewer", ts.tokens["alice/planner"],
			`{"jsonrpc":"2.0","id":"b1","method":"message/send","params":{"configuration":{"blocking":true},"message":{"role":"user","messageId":"m-block","parts":[{"kind":"text","text":"Please review PR 13"}]}}}`)
		done <- answer{status, body}
	}()
	servertest.Parked(t, ts.Waker, 1)
	agent := ts.mcpAgent(t, "alice/reviewer")
	inbox := tool(t, agent, "check_inbox", map[string]any{})
	row := inbox["messages"].([]any)[0].(map[string]any)
	id, conv := row["message_id"].(string), row["conversation_id"].(string)
	tool(t, agent, "acknowledge", map[string]any{"message_id": id, "outcome": "processing"})
	tool(t, agent, "send_message", map[string]any{"conversation_id": conv, "body": "Merged."})
	tool(t, agent, "acknowledge", map[string]any{"message_id": id})
	got := <-done
	var resp struct {
		ID     string `json:"id"`
		Result struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got.body), &resp); err != nil || got.status != 200 || resp.ID != "b1" || resp.Result.ID != id || resp.Result.Status.State != "completed" {
		t.Fatalf("blocking send: %d %s; want the completed task %s", got.status, got.body, id)
	}

	req, err := http.NewRequestWithContext(t.Context(), "POST", ts.url+"/a2a/alice/reviewer",
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.tokens["alice/planner"])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("resubscribe: Content-Type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev struct {
				Result struct {
					Kind   string `json:"kind"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"result"`
			}
			json.Unmarshal([]byte(data), &ev)
			events = append(events, ev.Result.Kind+":"+ev.Result.Status.State)
		}
	}
	// The task is final already: the stream hands it over and ends.
	if strings.Join(events, " ") != "task:completed" {
		t.Errorf("resubscribe to a completed task: %v; want the task, then the end", events)
	}
}
