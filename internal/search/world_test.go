package search_test

import (
	"context"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/search"
	"github.com/palaverhq/palaver/internal/store/storetest"
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
	return &world{World: w, finder: search.New(w.Hub, indexedFirst{t, w.Store})}
}

// indexedFirst searches once the store's search index holds every message
// committed so far, as it does within a second (DESIGN.md §17).
type indexedFirst struct {
	t  testing.TB
	db hub.Store
}

func (s indexedFirst) SearchMessages(ctx context.Context, f hub.SearchFilter, limit int) ([]*hub.Message, error) {
	storetest.SearchIndexed(s.t, s.db)
	return s.db.SearchMessages(ctx, f, limit)
}

// newWorldOn is newWorld on db.
func newWorldOn(t testing.TB, db hub.Store) *world {
	t.Helper()
	w := hubtest.OpenOn(t, hub.DefaultSettings(), db)
	return &world{World: w, finder: search.New(w.Hub, w.Store)}
}
