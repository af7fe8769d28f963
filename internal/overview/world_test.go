package overview_test

import (
	"context"
	"errors"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
)

var ctx = context.Background()

// world is the pages' reads and the projects' leaf over a hubtest world
// (PALAVER_TEST_STORE chooses the store), with alice (agents planner and
// reviewer) and bob (agent helper).
type world struct {
	*hubtest.World
	pages    *overview.Overview
	projects *projects.Projects
}

func newWorld(t *testing.T) *world {
	t.Helper()
	hw := hubtest.Open(t, hub.DefaultSettings())
	return &world{World: hw, pages: overview.New(hw.Hub, hw.Store), projects: projects.New(hw.Hub, hw.Store)}
}

// owner is alice, for person actions.
func (w *world) owner(t *testing.T) *hub.User { return w.Person(t, "alice") }

// sendAs sends body and returns the brake word that refused it ("" when
// sent).
func sendAs(t *testing.T, w *world, c *hub.Caller, conv, body, instance string) string {
	t.Helper()
	_, err := w.Hub.SendMessage(ctx, c, hub.SendInput{ConversationID: conv, Body: body, Instance: instance})
	if err == nil {
		return ""
	}
	r, ok := err.(*hub.Refusal)
	if !ok || r.Status != "denied" {
		t.Fatalf("send %q: %v, want sent or denied", body, err)
	}
	return r.Word()
}

// code is an error's wire code ("" for nil).
func code(err error) string {
	var e *hub.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.WireCode()
	}
	return "untyped: " + err.Error()
}
