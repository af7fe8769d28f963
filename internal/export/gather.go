package export

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// What goes into an export (§18): a conversation or a whole project as its
// person may keep it — every message with its seq, ids, sender, provenance
// and, of the ones the person edited, the agent's own words, how far
// everyone read, who takes part, and a project's people, items with their
// history and images. Only what the person can see goes in, by the hub's
// own rules: a conversation as the person reads one (hub.PersonRoom), a
// project by membership (hub.Project) with its threads, the agent's own
// words as the hub hands them (hub.WithOriginals).

// Export is what a person exports: one conversation, or a project and its
// threads. It is read as it stands when exported; a send that commits
// meanwhile may or may not be in it, as on a page.
type Export struct {
	By *hub.User // the person exporting
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
	Conversation *hub.Conversation
	// Participants are those taking part now, with their roles and when
	// they joined (archived agents are listed nowhere, §1).
	Participants []hub.Participant
	// Messages are every delivered message, by seq; held and rejected
	// ones, which reached nobody, are not among them.
	Messages []*hub.Message
	// Reads are everyone's places: each participant's and each named
	// session's last read seq.
	Reads []hub.Read
}

// ProjectExport is a project as exported: its people and agents, its items each
// with its thread and every change, and its images (oldest first), whose
// bytes Export.ImageData reads.
type ProjectExport struct {
	Project *hub.Project
	Members []hub.ProjectMember
	Agents  []hub.ProjectAgent // not archived, each with its effective access
	Items   []*hub.ItemView
	Images  []*hub.Image
}

// Store is what an Exporter reads of the hub's store.
type Store interface {
	Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*hub.Message, error)
	Reads(ctx context.Context, conversationID string) ([]hub.Read, error)
	Participants(ctx context.Context, conversationID string) ([]hub.Participant, error)
	Images(ctx context.Context, projectID string) ([]*hub.Image, error)
	ImageData(ctx context.Context, sha256 string) ([]byte, error)
	UserByID(ctx context.Context, id string) (*hub.User, error)
	AgentByID(ctx context.Context, id string) (*hub.Agent, error)
}

// An Exporter gathers exports over the hub and its store; the faces call
// it, then Write the archive.
type Exporter struct {
	hub   *hub.Hub // who may see what, and the clock
	store Store
}

// New returns the exporter over h and its store.
func New(h *hub.Hub, s Store) *Exporter { return &Exporter{hub: h, store: s} }

// page is how many messages one read of an export takes.
const page = 500

// Conversation is a conversation the person may read as a person — one
// they take part in, or one an agent of theirs does — with its whole
// history, participants and places (§18). Exporting reads nothing: no
// place moves. Any other conversation, and a closed one, is not_found.
func (x *Exporter) Conversation(ctx context.Context, u *hub.User, conversationID string) (*Export, error) {
	v, err := x.hub.PersonRoom(ctx, u, conversationID)
	if err != nil {
		return nil, err
	}
	e := x.newExport(u)
	c, err := x.conversation(ctx, u, v)
	if err != nil {
		return nil, err
	}
	e.Conversations = []*ConversationExport{c}
	if err := x.name(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Project is a project the person is a member of, with its members,
// agents, items and their history, images, and every thread that is not
// closed with its whole history (§18). A project they are not a member of
// is not_found, like one that does not exist.
func (x *Exporter) Project(ctx context.Context, u *hub.User, projectID string) (*Export, error) {
	d, err := x.hub.Project(ctx, u, projectID)
	if err != nil {
		return nil, err
	}
	e := x.newExport(u)
	pe := &ProjectExport{Project: d.Project, Members: d.Members, Agents: d.Agents}
	for _, it := range d.Items {
		iv, err := x.hub.ItemWithHistory(ctx, it)
		if err != nil {
			return nil, err
		}
		pe.Items = append(pe.Items, iv)
	}
	if pe.Images, err = x.store.Images(ctx, d.Project.ID); err != nil {
		return nil, hub.AsError(err)
	}
	slices.Reverse(pe.Images) // oldest first, like everything else here
	e.Project = pe
	// Being a member is the whole grant to a project's threads (§8); a
	// thread's participants follow its members.
	threads := slices.Clone(d.Threads)
	slices.SortFunc(threads, func(a, b *hub.Conversation) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	for _, t := range threads {
		ps, err := x.store.Participants(ctx, t.ID)
		if err != nil {
			return nil, hub.AsError(err)
		}
		c, err := x.conversation(ctx, u, &hub.ConversationView{Conversation: t, Participants: ps})
		if err != nil {
			return nil, err
		}
		e.Conversations = append(e.Conversations, c)
	}
	if err := x.name(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

func (x *Exporter) newExport(u *hub.User) *Export {
	return &Export{By: u, At: x.hub.Now(), Names: map[string]string{}, imageData: x.store.ImageData}
}

// ImageData reads the bytes of one of the export's images.
func (e *Export) ImageData(ctx context.Context, img *hub.Image) ([]byte, error) {
	if e.Project == nil || !slices.Contains(e.Project.Images, img) {
		return nil, hub.NotFound("image %q is not in this export", hub.Echo(img.ID))
	}
	data, err := e.imageData(ctx, img.SHA256)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return data, nil
}

// conversation reads a conversation's whole history and places, as u sees
// them: with the agent's own words only of the messages u edited.
func (x *Exporter) conversation(ctx context.Context, u *hub.User, v *hub.ConversationView) (*ConversationExport, error) {
	c := &ConversationExport{Conversation: v.Conversation, Participants: v.Listed()}
	for after := int64(0); ; {
		msgs, err := x.store.Messages(ctx, v.Conversation.ID, after, page)
		if err != nil {
			return nil, hub.AsError(err)
		}
		if err := x.hub.WithOriginals(ctx, u, msgs); err != nil {
			return nil, err
		}
		c.Messages = append(c.Messages, msgs...)
		if len(msgs) < page {
			break
		}
		after = msgs[len(msgs)-1].Seq
	}
	var err error
	if c.Reads, err = x.store.Reads(ctx, v.Conversation.ID); err != nil {
		return nil, hub.AsError(err)
	}
	return c, nil
}

// name fills e.Names with the handle of every principal the export
// mentions, from what it holds and, for the rest (a conversation's
// creator, an image's uploader, one who left), from the store.
func (x *Exporter) name(ctx context.Context, e *Export) error {
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
		handle, err := x.handle(ctx, id)
		if err != nil {
			return err
		}
		e.Names[id] = handle
	}
	return nil
}

// handle is the handle of a person or an agent by id; "" for an id that
// names neither.
func (x *Exporter) handle(ctx context.Context, id string) (string, error) {
	var handle string
	var err error
	switch hub.IDKind(id) {
	case hub.IDUser:
		var u *hub.User
		if u, err = x.store.UserByID(ctx, id); err == nil {
			handle = u.Handle
		}
	case hub.IDAgent:
		var a *hub.Agent
		if a, err = x.store.AgentByID(ctx, id); err == nil {
			handle = a.Handle()
		}
	}
	if err != nil && !errors.Is(err, hub.ErrNoRows) {
		return "", hub.AsError(err)
	}
	return handle, nil
}
