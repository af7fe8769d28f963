package hub

import "context"

// NewTokenForTest returns a well-formed agent token that was never minted.
func NewTokenForTest() string { return newTokenSecret(AgentTokenPrefix) }

// NewThreadForTest stores a project thread with the agents directly (the
// first is its creator), as projects would.
func (h *Hub) NewThreadForTest(ctx context.Context, agents ...*Caller) (string, error) {
	var targets []*Principal
	for _, c := range agents[1:] {
		targets = append(targets, &Principal{ID: c.Agent.ID, Kind: PrincipalAgent, Handle: c.Agent.Handle(), OwnerID: c.Agent.OwnerID, Agent: c.Agent})
	}
	var id string
	err := h.store.Update(ctx, func(tx Tx) error {
		v, _, err := h.insertConversation(ctx, tx, agents[0], &Conversation{Kind: KindThread, Title: "thread"}, targets)
		if err == nil {
			id = v.Conversation.ID
		}
		return err
	})
	return id, err
}
