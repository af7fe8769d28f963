// Package projects is what a project holds beside its threads (DESIGN.md
// §8): items on its board, each with its history (items.go); proposals of
// new projects and requests for access, which agents make for their owner
// to decide (proposals.go); images (images.go); and an agent's list of
// projects (list.go). Membership, access and threads, which every send
// into a thread checks, stay in the hub, and so does the decision of a
// proposal or a request, which the hub's one Decide of every approval
// makes. The MCP face, the REST face and the dashboard call the Projects
// here.
package projects

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// itemReader is how an item is read, of the store or of a transaction.
type itemReader interface {
	Item(ctx context.Context, id string) (*hub.Item, error)
}

// Store is what the Projects read of the hub's store; they write through
// hub.Commit.
type Store interface {
	itemReader
	ProjectAgent(ctx context.Context, projectID, agentID string) (*hub.ProjectAgent, error)
	Image(ctx context.Context, id string) (*hub.Image, error)
	ImageData(ctx context.Context, sha256 string) ([]byte, error)
	ProjectsOf(ctx context.Context, principalID string) ([]*hub.Project, error)
}

// Projects is a project's items, requests and images over the hub and its
// store; the faces decode, call one of its methods, and render.
type Projects struct {
	hub   *hub.Hub // access, membership, sessions, the clock, commits
	store Store
}

// New returns the Projects over h and its store.
func New(h *hub.Hub, s Store) *Projects { return &Projects{hub: h, store: s} }
