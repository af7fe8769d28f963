package web

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// The home page: what waits for the person, their paused conversations,
// and their agents at a glance.

// homePage is what the home page shows.
type homePage struct {
	Approvals []hub.Approval
	Paused    []hub.ConversationListing
	Recent    []hub.ConversationListing
	Agents    []*hub.Agent
}

// homeRecent is how many conversations the home page lists.
const homeRecent = 8

func (w *Web) home(ctx context.Context, r *request) (*reply, error) {
	var p homePage
	var err error
	if p.Approvals, err = w.waiting(ctx, r); err != nil {
		return nil, err
	}
	convs, err := w.hub.PersonConversations(ctx, r.user, "", 0)
	if err != nil {
		return nil, err
	}
	for _, c := range convs.Conversations {
		if c.Conversation.State() == hub.StatusPaused {
			p.Paused = append(p.Paused, c)
		} else if len(p.Recent) < homeRecent {
			p.Recent = append(p.Recent, c)
		}
	}
	if p.Agents, err = w.hub.Agents(ctx, r.user.Handle, false); err != nil {
		return nil, err
	}
	return &reply{page: "home", data: p}, nil
}
