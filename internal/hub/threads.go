package hub

import (
	"context"
	"errors"
	"strings"
)

// Threads (§8): conversations of kind thread that belong to a project and
// have its people and agents as participants. The same title, trimmed and
// case-insensitive, finds the same open thread; an item has one thread of
// its own.

// threadKey is what finds a thread again: its item, or its title trimmed
// and case-folded.
func threadKey(title, itemID string) string {
	if itemID != "" {
		return "item:" + itemID
	}
	return "title:" + strings.ToLower(title)
}

// checkThread checks open_thread's choice of a title or an item.
func checkThread(title, itemID string) (string, error) {
	switch {
	case title != "" && itemID != "":
		return "", invalid("", "give title or item_id, not both")
	case itemID != "":
		return "", nil
	case strings.TrimSpace(title) == "":
		return "", invalid("", "give the thread's title (the same title finds the same thread) or an item_id")
	}
	return checkText("title", strings.TrimSpace(title), 1, MaxTitle)
}

// OpenThread is open_thread (§8): the project's open thread with this
// title, or of this item, started when there is none. Any agent of the
// project may open one that exists; starting one needs speak. Participants
// hear conversation.opened.
func (h *Hub) OpenThread(ctx context.Context, c *Caller, projectID, title, itemID string) (*ConversationView, error) {
	title, err := checkThread(title, itemID)
	if err != nil {
		return nil, err
	}
	if err := h.homeOnFirstUse(ctx, c.Agent.OwnerID, projectID); err != nil {
		return nil, err
	}
	var view *ConversationView
	err = retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			if err := tx.LockProject(ctx, projectID); err != nil {
				return nil, err
			}
			p, _, access, err := agentProject(ctx, tx, c.Agent, projectID)
			if err != nil {
				return nil, err
			}
			var events []*Event
			view, events, err = h.openThread(ctx, tx, p, c.Agent.ID, access == AccessSpeak, title, itemID)
			return events, err
		})
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// OpenThreadAsPerson is a member of a project opening (or starting) one of
// its threads by title.
func (h *Hub) OpenThreadAsPerson(ctx context.Context, u *User, projectID, title string) (*ConversationView, error) {
	title, err := checkThread(title, "")
	if err != nil {
		return nil, err
	}
	var view *ConversationView
	err = retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			p, err := lockedProject(ctx, tx, u, projectID, false)
			if err != nil {
				return nil, err
			}
			if err := notArchived(p); err != nil {
				return nil, err
			}
			var events []*Event
			view, events, err = h.openThread(ctx, tx, p, u.ID, true, title, "")
			return events, err
		})
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// openThread finds the project's thread with the title or of the item, or
// starts it with creatorID as its owner when canStart, every other
// participant hearing conversation.opened.
func (h *Hub) openThread(ctx context.Context, tx Tx, p *Project, creatorID string, canStart bool, title, itemID string) (*ConversationView, []*Event, error) {
	if itemID != "" {
		it, err := tx.Item(ctx, itemID)
		if errors.Is(err, ErrNoRows) || (err == nil && it.ProjectID != p.ID) {
			return nil, nil, notFound("no item %q is in this project; list them with get_project", echo(itemID))
		}
		if err != nil {
			return nil, nil, err
		}
		title = it.Title
	}
	key := threadKey(title, itemID)
	conv, err := tx.ThreadByKey(ctx, p.ID, key)
	if err == nil {
		ps, err := tx.Participants(ctx, conv.ID)
		return &ConversationView{Conversation: conv, Participants: ps}, nil, err
	}
	if !errors.Is(err, ErrNoRows) {
		return nil, nil, err
	}
	if !canStart {
		return nil, nil, deny(AccessListen, "%s: you may read its threads but not start one", listenWhy(p))
	}
	now := h.now()
	conv = &Conversation{ID: NewID(IDConversation, now), Kind: KindThread, Title: title, Status: StatusOpen, ProjectID: p.ID, ItemID: itemID,
		ThreadKey: key, CreatorID: creatorID, CreatedAt: now, UpdatedAt: now}
	if err := tx.InsertConversation(ctx, conv); err != nil {
		return nil, nil, err
	}
	want, err := threadParticipants(ctx, tx, p)
	if err != nil {
		return nil, nil, err
	}
	var events []*Event
	for _, w := range want {
		w.ConversationID, w.JoinedAt = conv.ID, now
		if w.PrincipalID == creatorID {
			w.Role = RoleOwner
		} else {
			events = append(events, &Event{RecipientID: w.PrincipalID, Type: EventConversationOpened, ConversationID: conv.ID, CreatedAt: now})
		}
		if err := tx.AddParticipant(ctx, &w); err != nil {
			return nil, nil, err
		}
	}
	ps, err := tx.Participants(ctx, conv.ID)
	return &ConversationView{Conversation: conv, Participants: ps}, events, err
}

// threadSend is how the agent may send into a project thread (§8): refused
// with listen when its access there is listen (as its owner set it, or as
// the project's owner capped every agent), held for its owner (inReview)
// when its owner reviews it there.
func threadSend(ctx context.Context, r Reader, conv *Conversation, a *Agent) (inReview bool, err error) {
	p, err := r.Project(ctx, conv.ProjectID)
	if err != nil {
		return false, err
	}
	pa, err := r.ProjectAgent(ctx, conv.ProjectID, a.ID)
	if err != nil {
		return false, err // a participant of a thread is in its project
	}
	if effectiveAccess(p, pa) != AccessSpeak {
		return false, deny(AccessListen, "%s: you may read its threads but not send", listenWhy(p))
	}
	return pa.Review, nil
}
