package hub_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// faultStore is a real store whose write transactions fail one query on
// demand, as a broken disk or a lost connection would.
type faultStore struct {
	hub.Store
	failAgentByHandle atomic.Bool
}

func (s *faultStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.Store.Update(ctx, func(tx hub.Tx) error { return fn(faultTx{tx, s}) })
}

type faultTx struct {
	hub.Tx
	s *faultStore
}

var errDisk = errors.New("disk I/O error")

func (t faultTx) AgentByHandle(ctx context.Context, owner, slug string) (*hub.Agent, error) {
	if t.s.failAgentByHandle.Load() {
		return nil, errDisk
	}
	return t.Tx.AgentByHandle(ctx, owner, slug)
}

// TestApprovalFailingInternallyIsNotReportedDone: when opening the
// conversation an approved inbound ask was for fails inside the store, the
// decision is an error and nothing of it is kept — the ask still waits, and
// the agent hears nothing — instead of an approval with no conversation.
func TestApprovalFailingInternallyIsNotReportedDone(t *testing.T) {
	fs := &faultStore{}
	w := newWorldOn(t, hub.DefaultSettings(), func(s hub.Store) hub.Store { fs.Store = s; return fs })
	alice, bob := w.person(t, "alice"), w.person(t, "bob")
	if _, err := w.reach.RequestContact(ctx, alice, "bob", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.DecideContact(ctx, bob, "alice", true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.SetGrant(ctx, alice, "alice/planner", "bob", false, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"}); code(err) != "pending_approval:pending_approval" {
		t.Fatalf("open: %v, want pending_approval", err)
	}
	asks, err := w.Hub.Approvals(ctx, bob)
	if err != nil || len(asks) != 1 {
		t.Fatalf("bob's approvals: %+v, %v", asks, err)
	}
	start := w.Latest(t, w.Planner)

	fs.failAgentByHandle.Store(true)
	if _, err := w.Hub.DecideInbound(ctx, bob, asks[0].ID, true); code(err) != "internal" || !errors.Is(err, errDisk) {
		t.Fatalf("approving while the store fails: %v, want an internal error carrying its cause", err)
	}
	if again, _ := w.Hub.Approvals(ctx, bob); len(again) != 1 || again[0].ID != asks[0].ID {
		t.Fatalf("after the failed approval bob's approvals are %+v, want the ask still waiting", again)
	}
	if r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: start}); err != nil || len(r.Events) != 0 {
		t.Fatalf("the planner heard %+v, %v; want nothing", r, err)
	}

	fs.failAgentByHandle.Store(false)
	if _, err := w.Hub.DecideInbound(ctx, bob, asks[0].ID, true); err != nil {
		t.Fatal(err)
	}
	if v, err := w.Hub.OpenConversation(ctx, w.Planner, []string{"bob/helper"}); err != nil || v.Conversation.Kind != hub.KindDirect {
		t.Fatalf("open after the approval: %+v, %v", v, err)
	}
}
