package a2aclient_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestRemoteAgentInputRequired (§18): a remote task that asks for input
// becomes the remote's message asking for it, mentioning the sender; the
// conversation's next message to it is sent into that task (the same
// contextId and taskId), and its answer completes it; the message after
// that starts afresh. Another conversation's message is never sent into
// it.
func TestRemoteAgentInputRequired(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	f.ask = true
	w := remoteWorld(t, f)
	addRemote(t, w, "echo", f)
	conv := w.Direct(t, w.Planner, "alice/echo")
	send := func(conv, body string) {
		t.Helper()
		if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: body}); err != nil {
			t.Fatalf("%v: %v", err, hub.AsError(err).Err)
		}
		if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
			t.Fatalf("pass = %+v", p)
		}
	}

	send(conv, "weather?")
	ms := messages(t, w, conv)
	asked := ms[len(ms)-1]
	if asked.SenderHandle != "alice/echo" || !strings.HasPrefix(asked.Body, "which city?\n\n") || !strings.Contains(asked.Body, "the next message to it in this conversation continues its task") ||
		!slices.Contains(asked.Mentions, "alice/planner") || asked.Provenance().Author != hub.AuthorRemote {
		t.Fatalf("the question = %q, mentions %v, provenance %+v", asked.Body, asked.Mentions, asked.Provenance())
	}
	first := f.sentIDs()[0]

	other := w.Direct(t, w.Planner, "alice/echo", "alice/reviewer")
	send(other, "elsewhere?")

	send(conv, "Lisbon")
	if ms := messages(t, w, conv); ms[len(ms)-1].Body != "sunny in Lisbon" {
		t.Fatalf("the answer = %q", ms[len(ms)-1].Body)
	}
	send(conv, "and tomorrow?")
	f.mu.Lock()
	defer f.mu.Unlock()
	want := []string{"", "", "task-" + first, ""}
	if !slices.Equal(f.taskIDs, want) || f.ctxs[2] != conv {
		t.Fatalf("taskIds sent = %q (contexts %v); want %q", f.taskIDs, f.ctxs, want)
	}
}

// TestRemoteAgentInputAnswerStale: a remote that meets the answer sent
// into its task with the task as it stood — still asking — is asked after
// as a task at work, and its question is not posted again: what comes
// next is what it made of the answer.
func TestRemoteAgentInputAnswerStale(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	f.ask, f.stale = true, true
	w := remoteWorld(t, f)
	addRemote(t, w, "echo", f)
	conv := w.Direct(t, w.Planner, "alice/echo")
	w.Send(t, w.Planner, conv, "weather?")
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("the question: %+v", p)
	}
	w.Send(t, w.Planner, conv, "Porto")
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Failed] != 1 {
		t.Fatalf("the answer met with the task still asking: %+v; want it asked after", p)
	}
	if n := len(messages(t, w, conv)); n != 3 {
		t.Fatalf("%d messages; the question was posted again", n)
	}
	w.Clock.Advance(time.Minute)
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("asked after: %+v", p)
	}
	ms := messages(t, w, conv)
	if len(ms) != 4 || ms[3].Body != "sunny in Porto" {
		t.Fatalf("%d messages, last %q", len(ms), ms[len(ms)-1].Body)
	}
}
