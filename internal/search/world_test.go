package search_test

import (
	"context"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/search"
)

var ctx = context.Background()

var code = hubtest.Code

// world is a Finder over a hubtest world.
type world struct {
	*hubtest.World
	finder *search.Finder
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	return &world{World: w, finder: search.New(w.Hub, w.Store)}
}

// newWorldOn is newWorld on db.
func newWorldOn(t testing.TB, db hub.Store) *world {
	t.Helper()
	w := hubtest.OpenOn(t, hub.DefaultSettings(), db)
	return &world{World: w, finder: search.New(w.Hub, w.Store)}
}
