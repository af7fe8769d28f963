package hub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// watchInbox follows c's inbox in the background: each change arrives on the
// returned channel, and what WatchInbox returned on the other.
func (w *world) watchInbox(t *testing.T, c *hub.Caller) (<-chan struct{}, <-chan error) {
	t.Helper()
	changes, done := make(chan struct{}, 10), make(chan error, 1)
	watchCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	started := make(chan struct{})
	first := true
	go func() {
		done <- w.Hub.WatchInbox(watchCtx, c, func() bool {
			if first {
				first = false
				close(started)
				return true
			}
			changes <- struct{}{}
			return true
		})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the watch ended at once: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not start")
	}
	return changes, done
}

// changed waits for one change of the inbox, at most 100 ms (§19).
func changed(t *testing.T, changes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-changes:
	case <-time.After(100 * time.Millisecond):
		t.Fatalf("%s: no change of the inbox within 100 ms", what)
	}
}

// TestWatchInbox: a watch hears of a message delivered to its agent (which
// listens meanwhile) and of its acknowledgement, not of the agent's own send, and ends when the
// token is revoked. Each step starts a watch of its own, so no wake left
// over from the step before stands in for the one it checks.
func TestWatchInbox(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Reviewer, "alice/planner")
	changes, _ := w.watchInbox(t, w.Planner)
	sent := w.Send(t, w.Reviewer, conv, "please review")
	changed(t, changes, "a message delivered")
	if sent.Listening != 1 {
		t.Errorf("the send says %d recipients listen; want the one following its inbox", sent.Listening)
	}

	changes, _ = w.watchInbox(t, w.Planner)
	if _, err := w.Hub.Acknowledge(ctx, w.Planner, sent.Message.ID, hub.OutcomeDone, ""); err != nil {
		t.Fatal(err)
	}
	changed(t, changes, "an acknowledgement")

	// The agent's own words change nothing in its inbox: one change, for
	// the message after them.
	changes, _ = w.watchInbox(t, w.Planner)
	w.Send(t, w.Planner, conv, "done")
	w.Send(t, w.Reviewer, conv, "thanks")
	changed(t, changes, "the next message")
	select {
	case <-changes:
		t.Fatal("the agent's own send was taken for a change of its inbox")
	default:
	}

	_, done := w.watchInbox(t, w.Planner)
	if _, err := w.Hub.RevokeToken(ctx, w.Planner.TokenID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code(err) != "unauthenticated" {
			t.Fatalf("the watch ended with %v, want unauthenticated", err)
		}
	case <-time.After(100 * time.Millisecond):
		t.Fatal("the watch goes on after its token was revoked")
	}
}

// TestWatchInboxEnds: archiving the agent ends its watches, and so does
// the server shutting down.
func TestWatchInboxEnds(t *testing.T) {
	w := newWorld(t)
	_, archived := w.watchInbox(t, w.Helper)
	if _, err := w.Hub.ArchiveAgent(ctx, "bob/helper"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-archived:
		if code(err) != "unauthenticated" {
			t.Fatalf("the watch ended with %v, want unauthenticated", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the watch goes on after its agent was archived")
	}
	_, shut := w.watchInbox(t, w.Planner)
	w.Hub.Shutdown()
	select {
	case err := <-shut:
		if !errors.Is(err, hub.ErrShutdown) {
			t.Fatalf("the watch ended with %v, want ErrShutdown", err)
		}
	case <-time.After(time.Second):
		t.Fatal("the watch goes on after the server shut down")
	}
	// Without the read scope there is nothing to follow.
	c := w.Agent(t, "alice/writer", hub.ScopeWrite)
	if err := w.Hub.WatchInbox(ctx, c, func() bool { return true }); code(err) != "missing_scope" {
		t.Fatalf("a watch without msg:read: %v", err)
	}
}
