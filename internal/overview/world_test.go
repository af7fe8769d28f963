package overview_test

import (
	"context"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
)

var ctx = context.Background()

var code = hubtest.Code

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
