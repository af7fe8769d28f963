package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpserver"
	"github.com/palaverhq/palaver/internal/servertest"
)

// TestLeanWaitParksBareOnItsRequest: the lean path parks a wait on the
// request's own goroutine with nothing of the tool's handler beneath the
// parking (callParked), so that the handler's reads, its decoding and its
// answer — which run off that goroutine — never grow the stack it holds
// while it waits (§17). Its answer is the wait's.
func TestLeanWaitParksBareOnItsRequest(t *testing.T) {
	ts := newTestServer(t)
	planner := ts.client(t, "alice/planner", older)
	conv := mustCall(t, planner, "open_conversation", map[string]any{"handles": []string{"alice/reviewer"}})["conversation_id"]
	cursor := mustCall(t, ts.client(t, "alice/reviewer", older), "whoami", map[string]any{})["latest_cursor"]
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"cursor":%q,"timeout_s":20}}}`, cursor)
	answered := make(chan []byte, 1)
	before := ts.srv.LeanCalls()
	go func() {
		_, b := ts.post(t, context.Background(), "/mcp/", ts.tokens["alice/reviewer"], body, nil)
		answered <- b
	}()
	// Parked: subscribed, and its goroutine asleep.
	var parked []string
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the wait did not park")
		}
		if ts.waker.Waiters() != 1 {
			continue
		}
		buf := make([]byte, 1<<20)
		parked = nil
		for _, g := range bytes.Split(buf[:runtime.Stack(buf, true)], []byte("\n\n")) {
			if bytes.Contains(g, []byte("hub.(*Hub).sleep(")) {
				parked = append(parked, string(g))
			}
		}
		if len(parked) > 0 {
			break
		}
	}
	if len(parked) != 1 {
		t.Fatalf("%d goroutines parked in a wait, want 1", len(parked))
	}
	if !strings.Contains(parked[0], "hub.(*Waiting).Sleep") || !strings.Contains(parked[0], "mcpserver.(*Server).callParked") {
		t.Errorf("the wait parked outside callParked:\n%s", parked[0])
	}
	for _, f := range []string{"mcpserver.(*Server).callTool", "mcpserver.newTool", "mcpserver.newParkingTool", "mcpserver.(*Server).startWait", "hub.(*Waiting).Step"} {
		if strings.Contains(parked[0], f) {
			t.Errorf("the parked request's goroutine holds %s beneath its parking:\n%s", f, parked[0])
		}
	}
	mustCall(t, planner, "send_message", map[string]any{"conversation_id": conv, "body": "wake up"})
	var resp struct {
		Result struct {
			StructuredContent struct {
				Events []struct {
					Message struct{ Body string }
				}
				TimedOut bool `json:"timed_out"`
			}
		}
	}
	b := <-answered
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Result.StructuredContent.Events) != 1 || resp.Result.StructuredContent.Events[0].Message.Body != "wake up" {
		t.Fatalf("answer %s (%v), want the one message", b, err)
	}
	if got := ts.srv.LeanCalls() - before; got != 2 { // the wait and the send
		t.Errorf("the lean path served %d calls, want 2", got)
	}
}

// TestParkedWaitHoldsNoBody: a wait's request body is read once, into
// one buffer of the length it announces (not grown from 512 bytes, which
// a parked wait's memory counts until a collection, §17), and the wait
// parked on the lean path keeps nothing of it: the call holds copies of
// the arguments it decoded. With no protocol version header, and with an
// older one, whose body alignVersionHeader reads first.
func TestParkedWaitHoldsNoBody(t *testing.T) {
	for _, version := range []string{"", older} {
		t.Run("version="+version, func(t *testing.T) {
			ts := newTestServer(t)
			token := ts.agent(t, "alice/reviewer", "", nil)
			type read struct {
				len, cap int
				buf      weak.Pointer[byte]
			}
			var reads []read
			var mu sync.Mutex
			mcpserver.OnBodyRead(t, func(body []byte) {
				mu.Lock()
				defer mu.Unlock()
				reads = append(reads, read{len(body), cap(body), weak.Make(&body[0])})
			})
			header := map[string]string{}
			if version != "" {
				header["Mcp-Protocol-Version"] = version
			}
			ctx, cancel := context.WithCancel(context.Background())
			answered := make(chan struct{})
			before := ts.srv.LeanCalls()
			go func() {
				defer close(answered)
				ts.post(t, ctx, "/mcp/", token, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"timeout_s":20}}}`, header)
			}()
			servertest.Parked(t, ts.waker, 1)
			if got := ts.srv.LeanCalls() - before; got != 1 {
				t.Fatalf("the lean path took %d calls, want the wait", got)
			}
			runtime.GC()
			runtime.GC()
			mu.Lock()
			if len(reads) != 1 {
				t.Fatalf("%d bodies read, want 1", len(reads))
			}
			if r := reads[0]; r.cap != r.len+1 {
				t.Errorf("the body of %d bytes was read into a buffer of %d, want %d", r.len, r.cap, r.len+1)
			}
			if reads[0].buf.Value() != nil {
				t.Error("the parked wait still holds its request's body")
			}
			mu.Unlock()
			cancel() // the client hangs up
			<-answered
			servertest.Parked(t, ts.waker, 0)
		})
	}
}

// TestSDKWaitEndsWhenItsClientHangsUp: through the SDK too, in either
// era, a parked wait ends and frees its slot when its client hangs up;
// in the older era the SDK does not cancel the handler, and the wait
// watches the request's own context, which bearer keeps (authed).
func TestSDKWaitEndsWhenItsClientHangsUp(t *testing.T) {
	ts := newTestServerWith(t, hub.DefaultSettings(), mcpserver.WithoutLean)
	token := ts.agent(t, "alice/reviewer", "", nil)
	for _, era := range []string{older, modern} {
		t.Run(era, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				rawWait(t, ts, ctx, token, era, map[string]any{"timeout_s": 55})
			}()
			servertest.Parked(t, ts.waker, 1)
			cancel() // the client hangs up
			servertest.Parked(t, ts.waker, 0)
			<-done
		})
	}
}
