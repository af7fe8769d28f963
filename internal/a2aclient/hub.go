package a2aclient

import (
	"context"
	"errors"
	"net/netip"

	"github.com/palaverhq/palaver/internal/hub"
)

// Caller makes a Client the hub's RemoteCaller (its
// remote outbox, §18).
type Caller struct{ *Client }

var _ hub.RemoteCaller = Caller{}

// FetchCard implements hub.RemoteCaller.
func (c Caller) FetchCard(ctx context.Context, cardURL, credential string, allow func(string, netip.Addr) bool) (*hub.RemoteCard, error) {
	card, err := c.Client.FetchCard(ctx, cardURL, credential, allow)
	if err != nil {
		return nil, err
	}
	return &hub.RemoteCard{Name: card.Name, Description: card.Description, Provider: card.Provider, Skills: card.Skills,
		Endpoint: card.Endpoint, Version: card.Version}, nil
}

// Call implements hub.RemoteCaller: the message, in the conversation's
// context, or, once the remote made a task of it, a look at that task.
func (c Caller) Call(ctx context.Context, rc *hub.RemoteCall, allow func(string, netip.Addr) bool) (*hub.RemoteReply, error) {
	card := &Card{Endpoint: rc.Endpoint, Version: rc.Version}
	var r *Reply
	var err error
	if rc.TaskID != "" {
		r, err = c.Client.GetTask(ctx, card, rc.Credential, allow, rc.TaskID)
	} else {
		r, err = c.Client.Send(ctx, card, rc.Credential, allow, rc.ID, rc.ConversationID, rc.Continues, rc.Body)
	}
	var refused *RPCError
	if errors.As(err, &refused) {
		return nil, &hub.RemoteRefusal{Msg: refused.Error()}
	}
	if err != nil {
		return nil, err
	}
	reply := &hub.RemoteReply{TaskID: r.TaskID, State: r.State, Text: r.Text}
	for _, a := range r.Artifacts {
		reply.Artifacts = append(reply.Artifacts, hub.RemoteArtifact{ID: a.ID, Name: a.Name, Text: a.Text, Data: a.Data})
	}
	return reply, nil
}
