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
