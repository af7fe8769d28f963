// Package reach is whom an agent or a person may reach and bring in
// (DESIGN.md §1, §3, §10.5), as the faces list it: an agent's contacts
// with what it may do about each and the agents it may reach
// (contacts.go), the peers an agent or a person may bring into a room
// (peers.go), an agent's contact requests, which go to its own owner
// (requests.go), and people's contacts — asked for, looked up by handle,
// listed, cancelled, ended — with the Consent page of all a person decides
// (people.go). Deciding a contact request and what ending a contact takes
// with it stay in the hub, which Approvals decides through. The rule
// itself — who may speak to whom, which every send checks — stays in the
// hub, once (hub.MayAnswer); this package reads through it. The MCP face,
// the REST face, the dashboard and the command line call the Reach here.
package reach

import "github.com/palaverhq/palaver/internal/hub"

// statusAll is the status that lists requests of every status.
const statusAll = "all"

// Store is what the Reach reads of the hub's store (the may-answer rule
// among it reads grants, contacts and asks); it writes through the hub.
type Store interface {
	hub.Reader
}

// Reach is whom callers may reach, over the hub and its store; the faces
// decode, call one of its methods, and render.
type Reach struct {
	hub   *hub.Hub // the rule of reach, contacts, presence, commits
	store Store
}

// New returns the Reach over h and its store.
func New(h *hub.Hub, s Store) *Reach { return &Reach{hub: h, store: s} }
