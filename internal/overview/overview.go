// Package overview is what a person's pages show at a glance — the Bridge
// (§11), the projects' pages, an agent's page with its presence and inbox
// (agent.go) — composed from the hub's reads; who may see what stays the
// hub's. The dashboard and the REST face make one call of an Overview per
// page and render what it returns.
package overview

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Store is what an Overview reads of the hub's store.
type Store interface {
	RecentEvents(ctx context.Context, recipientID string, upTo hub.Pos, types []string, limit int) ([]*hub.Event, error)
	PausedConversations(ctx context.Context, ownerID string) ([]*hub.Conversation, error)
	ConversationView(ctx context.Context, id string) (*hub.ConversationView, error)
	RemoteAgents(ctx context.Context, ownerID string) ([]*hub.RemoteAgent, error)
	Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*hub.Agent, error)
	AgentByID(ctx context.Context, id string) (*hub.Agent, error)
	Instances(ctx context.Context, agentID string) ([]hub.Instance, error)
	Tokens(ctx context.Context, ownerID, agentID string) ([]*hub.Token, error)
	Images(ctx context.Context, projectID string) ([]*hub.Image, error)
}

// An Overview reads a person's pages over the hub and its store.
type Overview struct {
	hub   *hub.Hub // its clock, cursors, approvals, presence and projects as the person may see them
	store Store
}

// New returns the pages' reads over h and its store.
func New(h *hub.Hub, store Store) *Overview {
	return &Overview{hub: h, store: store}
}
