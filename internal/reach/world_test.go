package reach_test

import (
	"context"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/reach"
)

var ctx = context.Background()

var code = hubtest.Code

// world is the Reach over a hubtest world.
type world struct {
	*hubtest.World
	reach *reach.Reach
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	return &world{World: w, reach: reach.New(w.Hub, w.Store)}
}

// public makes the agent of handle (when there is none yet) public and
// signs it in again.
func (w *world) public(t *testing.T, handle string) *hub.Caller {
	t.Helper()
	c := w.Agent(t, handle)
	a, err := w.Hub.SetAgentPublic(ctx, c.Owner, c.Agent.Slug, true)
	if err != nil || !a.Public {
		t.Fatalf("making %s public: %+v, %v", handle, a, err)
	}
	if c, err = w.Hub.Authenticate(ctx, w.Tokens[handle]); err != nil || !c.Agent.Public {
		t.Fatalf("%s signed in: %+v, %v; want it public", handle, c, err)
	}
	return c
}
