package hub

import (
	"context"
	"strings"
)

// Participants of group conversations and rooms (§4, §10.5): adding and
// removing them with roles, and finding one by a handle, an id or a name.

// checkRole checks a role given to a participant: owner, admin or member;
// "" is none given (member for a newcomer, unchanged for one already in).
func checkRole(role string) (string, error) {
	switch role = strings.ToLower(strings.TrimSpace(role)); role {
	case "", RoleOwner, RoleAdmin, RoleMember:
		return role, nil
	}
	return "", invalid("", "role must be \"owner\", \"admin\" or \"member\" (got %q)", echo(role))
}

// mayManage decides whether actor may add someone to conversation v with
// role, or take someone out of it (removing): in a room only its owners
// and admins manage participants, and anywhere only an owner makes owners
// and only an owner or admin gives a role above member (§4, §10.5).
func mayManage(v *ConversationView, actorID, role string, removing bool) error {
	switch v.Conversation.Kind {
	case KindDirect:
		return invalid("", "a direct {conversation} keeps the participants it was opened with; start a group with {create_thread} instead")
	case KindThread:
		return invalid("", "a project thread's participants are the project's people and agents; ask an owner to bring them into the project")
	}
	if v.Conversation.Status == StatusCloseRequested {
		return BrakeClosing.deny("a close of this {conversation} is pending; its participants stay as they are")
	}
	me, _ := participant(v.Participants, actorID)
	switch {
	case role == RoleOwner && me.Role != RoleOwner:
		return &Error{Kind: KindForbidden, Msg: "only an owner of this {conversation} makes others owners"}
	case me.Role == RoleOwner || me.Role == RoleAdmin:
		return nil
	case v.Conversation.ByMention || removing:
		return &Error{Kind: KindForbidden, Msg: "only an owner or admin of this {conversation} adds or removes participants here; ask one of them (list the participants to see who)"}
	case role == RoleAdmin:
		return &Error{Kind: KindForbidden, Msg: "only an owner or admin of this {conversation} makes others admins"}
	}
	return nil
}

// AddParticipantAs brings a principal — a handle or a principal's id — into
// a group conversation the agent takes part in, with a role (§4, §10.5):
// whom the agent may reach (§3), by an owner or admin of a room. Adding
// someone already there changes their role when a role is given.
func (h *Hub) AddParticipantAs(ctx context.Context, c *Caller, conversationID, who, role string) (*ConversationView, error) {
	role, err := checkRole(role)
	if err != nil {
		return nil, err
	}
	var view *ConversationView
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		v, err := lockedAccess(ctx, tx, c.Agent.ID, conversationID)
		if err != nil {
			return nil, err
		}
		if err := mayManage(v, c.Agent.ID, role, false); err != nil {
			return nil, err
		}
		targets, asks, err := h.resolveAll(ctx, tx, c.Agent, []string{ownSlug(ctx, tx, c.Owner.Handle, who)})
		if err != nil {
			return asks, err
		}
		view = v
		return h.join(ctx, tx, v, c.Agent.ID, targets[0], role)
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// AddParticipantAsPerson is a person bringing someone into a room they
// take part in (§10.5): their own agents, their contacts, public agents.
func (h *Hub) AddParticipantAsPerson(ctx context.Context, u *User, conversationID, who, role string) (*ConversationView, error) {
	role, err := checkRole(role)
	if err != nil {
		return nil, err
	}
	var view *ConversationView
	err = h.update(ctx, func(tx Tx) ([]*Event, error) {
		v, err := personInRoom(ctx, tx, u, conversationID)
		if err != nil {
			return nil, err
		}
		if err := mayManage(v, u.ID, role, false); err != nil {
			return nil, err
		}
		p, err := resolve(ctx, tx, ownSlug(ctx, tx, u.Handle, who))
		if err != nil {
			return nil, err
		}
		if err := personMayAdd(ctx, tx, u, p); err != nil {
			return nil, err
		}
		view = v
		return h.join(ctx, tx, v, u.ID, p, role)
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return view, nil
}

// ownSlug reads who, a reference to someone to add, as one of owner's
// agents by its slug when it is a bare name no person has ("reviewer" is
// alice/reviewer for alice and her agents); otherwise as it is.
func ownSlug(ctx context.Context, r Reader, owner, who string) string {
	who = strings.TrimPrefix(strings.TrimSpace(who), "@")
	if strings.Contains(who, "/") || idKind(who) != "" {
		return who
	}
	if _, err := resolve(ctx, r, who); err == nil || AsError(err).Kind != KindNotFound {
		return who
	}
	return owner + "/" + who
}

// personInRoom loads, for a change, a conversation the person takes part
// in themselves (an owner looking on at an agent's does not manage it).
func personInRoom(ctx context.Context, tx Tx, u *User, conversationID string) (*ConversationView, error) {
	if err := tx.LockConversation(ctx, conversationID); err != nil {
		return nil, err
	}
	v, participant, err := personAccess(ctx, tx, u, conversationID)
	if err == nil && !participant {
		err = &Error{Kind: KindForbidden, Msg: "you look on at this {conversation} through your agent but do not take part in it; only its participants manage it"}
	}
	return v, err
}

// join adds target to v with role on actorID's behalf (or changes the role
// of one already there: an owner's only by an owner, and never the last
// owner's) and returns the conversation.opened event for a newcomer.
func (h *Hub) join(ctx context.Context, tx Tx, v *ConversationView, actorID string, target *Principal, role string) ([]*Event, error) {
	old, there := participant(v.Participants, target.ID)
	actor, _ := participant(v.Participants, actorID)
	switch {
	case there && (role == "" || old.Role == role):
		return nil, nil
	case role == "":
		role = RoleMember
	case there && old.Role == RoleOwner && actor.Role != RoleOwner:
		return nil, &Error{Kind: KindForbidden, Msg: "only an owner of this {conversation} changes an owner's role"}
	case there && onlyOwner(v.Participants, old):
		return nil, invalid("", "%s is this {conversation}'s only owner and stays one; make someone else owner first", old.Handle)
	}
	if !there {
		if err := checkMix(ctx, tx, target, v.Participants); err != nil {
			return nil, err
		}
	}
	now := h.now()
	joined := now
	if there {
		joined = old.JoinedAt // a new role is no new arrival
	}
	if err := tx.AddParticipant(ctx, &Participant{ConversationID: v.Conversation.ID, PrincipalID: target.ID, Kind: target.Kind,
		OwnerID: target.OwnerID, Role: role, JoinedAt: joined}); err != nil {
		return nil, err
	}
	var err error
	if v.Participants, err = tx.Participants(ctx, v.Conversation.ID); err != nil || there {
		return nil, err
	}
	return []*Event{{RecipientID: target.ID, Type: EventConversationOpened, ConversationID: v.Conversation.ID, CreatedAt: now}}, nil
}

// RemoveParticipant takes a participant — a handle or an id — out of a
// group conversation (§10.5): by an owner or admin, or anyone leaving
// themselves. The last owner stays. An agent taken out loses what waited
// for it there (message.withdrawn) and the conversation's history.
func (h *Hub) RemoveParticipant(ctx context.Context, c *Caller, conversationID, who string) (*ConversationView, error) {
	var view *ConversationView
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		v, err := lockedAccess(ctx, tx, c.Agent.ID, conversationID)
		if err != nil {
			return nil, err
		}
		view = v
		return h.leave(ctx, tx, v, c.Agent.ID, who)
	})
	if err != nil {
		return nil, err
	}
	return view, nil
}

// RemoveParticipantAsPerson is a person taking a participant out of a
// conversation they take part in.
func (h *Hub) RemoveParticipantAsPerson(ctx context.Context, u *User, conversationID, who string) (*ConversationView, error) {
	var view *ConversationView
	err := h.update(ctx, func(tx Tx) ([]*Event, error) {
		v, err := personInRoom(ctx, tx, u, conversationID)
		if err != nil {
			return nil, err
		}
		view = v
		return h.leave(ctx, tx, v, u.ID, who)
	})
	if err != nil {
		return nil, asOutcome(err)
	}
	return view, nil
}

// leave takes who out of v on actorID's behalf.
func (h *Hub) leave(ctx context.Context, tx Tx, v *ConversationView, actorID, who string) ([]*Event, error) {
	p, err := findParticipant(v.Participants, who)
	if err != nil {
		return nil, err
	}
	if p.PrincipalID != actorID {
		if err := mayManage(v, actorID, "", true); err != nil {
			return nil, err
		}
		if actor, _ := participant(v.Participants, actorID); p.Role == RoleOwner && actor.Role != RoleOwner {
			return nil, &Error{Kind: KindForbidden, Msg: "only an owner of this {conversation} removes an owner"}
		}
	}
	if onlyOwner(v.Participants, p) {
		return nil, invalid("", "%s is this {conversation}'s only owner and stays; make someone else owner first", p.Handle)
	}
	now := h.now()
	if err := tx.LeaveConversation(ctx, v.Conversation.ID, p.PrincipalID, now); err != nil {
		return nil, err
	}
	var events []*Event
	if p.Kind == PrincipalAgent {
		if events, err = withdraw(ctx, tx, p.PrincipalID, v.Conversation.ID, now); err != nil {
			return nil, err
		}
	}
	v.Participants, err = tx.Participants(ctx, v.Conversation.ID)
	return events, err
}

// onlyOwner reports whether p is the one owner among ps.
func onlyOwner(ps []Participant, p *Participant) bool {
	if p.Role != RoleOwner {
		return false
	}
	owners := 0
	for _, o := range ps {
		if o.Role == RoleOwner {
			owners++
		}
	}
	return owners == 1
}

// findParticipant finds the participant a reference names: a handle (with
// or without "@"), a principal's id, or an agent's slug where only one
// participant has it — and its display form with spaces ("weather agent").
// Anything else is not_found, naming who is there.
func findParticipant(ps []Participant, ref string) (*Participant, error) {
	key := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(ref), "@"))
	if key == "" {
		return nil, invalid("", "name a participant: a {handle}, an id or a name from the participant list")
	}
	var found []*Participant
	for i := range ps {
		p := &ps[i]
		if p.Archived {
			continue // an archived agent has left every conversation (§1)
		}
		if p.PrincipalID == ref || p.Handle == key {
			return p, nil
		}
		if _, slug, _ := strings.Cut(p.Handle, "/"); slug != "" && (slug == key || slug == strings.Join(strings.Fields(key), "-")) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var names []string
		for _, p := range ps {
			if !p.Archived {
				names = append(names, p.Handle)
			}
		}
		return nil, notFound("%q is not a participant of this {conversation}; its participants are %s", echo(ref), strings.Join(names, ", "))
	}
	names := make([]string, len(found))
	for i, p := range found {
		names[i] = p.Handle
	}
	return nil, invalid("", "%q names more than one participant (%s); use the {handle}", echo(ref), strings.Join(names, ", "))
}
