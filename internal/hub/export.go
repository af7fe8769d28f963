package hub

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
)

// Export (§18): a conversation or a whole project as its person may keep
// it — every message with its seq, ids, sender, provenance and, of the
// ones the person edited, the agent's own words (withOriginals), how far
// everyone read, who takes part, and a
// project's people, items with their history and images. Only what the
// person can see goes in: a conversation by the rule of reading one as a
// person (personAccess), a project by membership, with its threads. The
// hub gathers it; internal/export writes it down for every face.

// Export is what a person exports: one conversation, or a project and its
// threads. It is read as it stands when exported; a send that commits
// meanwhile may or may not be in it, as on a page.
type Export struct {
	By *User     // the person exporting
	At time.Time // when

	// Project is the project exported; nil for a conversation.
	Project *ProjectExport
	// Conversations is the conversation exported, or the project's
	// threads (not closed), oldest first.
	Conversations []*ConversationExport
	// Names gives the handle of every principal the export mentions by id
	// (senders, owners, deciders, creators, uploaders, members): a person's
	// handle (alice) or an agent's (alice/planner).
	Names map[string]string

	imageData func(ctx context.Context, sha256 string) ([]byte, error)
}

// ConversationExport is one conversation as exported.
type ConversationExport struct {
	Conversation *Conversation
	// Participants are those taking part now, with their roles and when
	// they joined (archived agents are listed nowhere, §1).
	Participants []Participant
	// Messages are every delivered message, by seq; held and rejected
	// ones, which reached nobody, are not among them.
	Messages []*Message
	// Reads are everyone's places: each participant's and each named
	// session's last read seq.
	Reads []Read
}

// ProjectExport is a project as exported: its people and agents, its
// items each with its thread and every change, and its images (oldest
// first), whose bytes Export.ImageData reads.
type ProjectExport struct {
	Project *Project
	Members []ProjectMember
	Agents  []ProjectAgent // not archived, each with its effective access
	Items   []*ItemView
	Images  []*Image
}

// exportPage is how many messages one read of an export takes.
const exportPage = 500

// ExportConversation is a conversation the person may read as a person —
// one they take part in, or one an agent of theirs does — with its whole
// history, participants and places (§18). Exporting reads nothing: no
// place moves. Any other conversation, and a closed one, is not_found.
func (h *Hub) ExportConversation(ctx context.Context, u *User, conversationID string) (*Export, error) {
	v, _, err := personAccess(ctx, h.store, u, conversationID)
	if err != nil {
		return nil, asOutcome(err)
	}
	e := h.newExport(u)
	c, err := exportConversation(ctx, h.store, u, v)
	if err != nil {
		return nil, err
	}
	e.Conversations = []*ConversationExport{c}
	if err := e.name(ctx, h.store); err != nil {
		return nil, err
	}
	return e, nil
}

// ExportProject is a project the person is a member of, with its members,
// agents, items and their history, images, and every thread that is not
// closed with its whole history (§18). A project they are not a member of
// is not_found, like one that does not exist.
func (h *Hub) ExportProject(ctx context.Context, u *User, projectID string) (*Export, error) {
	d, err := h.Project(ctx, u, projectID)
	if err != nil {
		return nil, err
	}
	e := h.newExport(u)
	pe := &ProjectExport{Project: d.Project, Members: d.Members, Agents: d.Agents}
	for _, it := range d.Items {
		iv, err := itemView(ctx, h.store, it)
		if err != nil {
			return nil, err
		}
		pe.Items = append(pe.Items, iv)
	}
	if pe.Images, err = h.store.Images(ctx, d.Project.ID); err != nil {
		return nil, AsError(err)
	}
	slices.Reverse(pe.Images) // oldest first, like everything else here
	e.Project = pe
	// Being a member is the whole grant to a project's threads (§8); a
	// thread's participants follow its members.
	threads := slices.Clone(d.Threads)
	slices.SortFunc(threads, func(a, b *Conversation) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, t := range threads {
		ps, err := h.store.Participants(ctx, t.ID)
		if err != nil {
			return nil, AsError(err)
		}
		c, err := exportConversation(ctx, h.store, u, &ConversationView{Conversation: t, Participants: ps})
		if err != nil {
			return nil, err
		}
		e.Conversations = append(e.Conversations, c)
	}
	if err := e.name(ctx, h.store); err != nil {
		return nil, err
	}
	return e, nil
}

func (h *Hub) newExport(u *User) *Export {
	return &Export{By: u, At: h.now(), Names: map[string]string{}, imageData: h.store.ImageData}
}

// ImageData reads the bytes of one of the export's images.
func (e *Export) ImageData(ctx context.Context, img *Image) ([]byte, error) {
	if e.Project == nil || !slices.Contains(e.Project.Images, img) {
		return nil, notFound("image %q is not in this export", echo(img.ID))
	}
	data, err := e.imageData(ctx, img.SHA256)
	if err != nil {
		return nil, AsError(err)
	}
	return data, nil
}

// exportConversation reads a conversation's whole history and places, as u
// sees them: with the agent's own words only of the messages u edited.
func exportConversation(ctx context.Context, r Reader, u *User, v *ConversationView) (*ConversationExport, error) {
	c := &ConversationExport{Conversation: v.Conversation, Participants: v.Listed()}
	for after := int64(0); ; {
		page, err := r.Messages(ctx, v.Conversation.ID, after, exportPage)
		if err != nil {
			return nil, AsError(err)
		}
		if err := withOriginals(ctx, r, u, page); err != nil {
			return nil, err
		}
		c.Messages = append(c.Messages, page...)
		if len(page) < exportPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	var err error
	if c.Reads, err = r.Reads(ctx, v.Conversation.ID); err != nil {
		return nil, AsError(err)
	}
	return c, nil
}

// name fills Names with the handle of every principal the export mentions,
// from what it holds and, for the rest (a conversation's creator, an
// image's uploader, one who left), from the store.
func (e *Export) name(ctx context.Context, r Reader) error {
	known := func(id, handle string) {
		if id != "" && handle != "" {
			e.Names[id] = handle
		}
	}
	var ids []string
	known(e.By.ID, e.By.Handle)
	if p := e.Project; p != nil {
		known(p.Project.OwnerID, p.Project.OwnerHandle)
		for _, m := range p.Members {
			known(m.UserID, m.Handle)
		}
		for _, a := range p.Agents {
			known(a.AgentID, a.Handle)
		}
		for _, it := range p.Items {
			for _, ch := range it.History {
				known(ch.ByID, ch.ByHandle)
			}
		}
		for _, img := range p.Images {
			ids = append(ids, img.UploadedBy)
		}
	}
	for _, c := range e.Conversations {
		ids = append(ids, c.Conversation.CreatorID)
		for _, p := range c.Participants {
			known(p.PrincipalID, p.Handle)
		}
		for _, rd := range c.Reads {
			known(rd.PrincipalID, rd.Handle)
		}
		for _, m := range c.Messages {
			known(m.SenderID, m.SenderHandle)
			known(m.OwnerID, m.OwnerHandle)
			ids = append(ids, m.DecidedBy)
		}
	}
	for _, id := range ids {
		if _, ok := e.Names[id]; ok || id == "" {
			continue
		}
		handle, err := principalHandle(ctx, r, id)
		if err != nil {
			return err
		}
		e.Names[id] = handle
	}
	return nil
}

// principalHandle is the handle of a person or an agent by id; "" for an
// id that names neither.
func principalHandle(ctx context.Context, r Reader, id string) (string, error) {
	var handle string
	var err error
	switch idKind(id) {
	case IDUser:
		var u *User
		if u, err = r.UserByID(ctx, id); err == nil {
			handle = u.Handle
		}
	case IDAgent:
		var a *Agent
		if a, err = r.AgentByID(ctx, id); err == nil {
			handle = a.Handle()
		}
	}
	if err != nil && !errors.Is(err, ErrNoRows) {
		return "", AsError(err)
	}
	return handle, nil
}
