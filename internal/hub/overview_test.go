package hub_test

import (
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// bridge is u's Bridge, as the dashboard reads it over the world's hub.
func (w *world) bridge(u *hub.User) (*overview.Bridge, error) {
	return overview.New(w.Hub, w.Store).Bridge(ctx, u)
}
