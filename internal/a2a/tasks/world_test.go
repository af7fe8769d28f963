package tasks_test

import (
	"context"
	"testing"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
)

var ctx = context.Background()

var code = hubtest.Code

// world is the Tasks over a hubtest world.
type world struct {
	*hubtest.World
	tasks *tasks.Tasks
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, hub.DefaultSettings())
}

// newWorldWith is newWorld with other settings.
func newWorldWith(t *testing.T, settings hub.Settings) *world {
	t.Helper()
	w := hubtest.Open(t, settings)
	return &world{World: w, tasks: tasks.New(w.Hub, w.Store)}
}
