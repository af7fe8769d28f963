package mcpserver

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
)

// The project tools of the default profile (§8, §10.3).

type projectView struct {
	ProjectID   string `json:"project_id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Owner       string `json:"owner"`
	Home        bool   `json:"home,omitempty"`
	AgentCap    string `json:"agent_cap,omitempty"`
	Access      string `json:"access,omitempty"` // the caller's
}

func viewProject(p *hub.Project, access string) projectView {
	return projectView{ProjectID: p.ID, Name: p.Name, Description: p.Description, Owner: p.OwnerHandle, Home: p.Home,
		AgentCap: p.AgentCap, Access: access}
}

func (s *Server) listProjects(ctx context.Context, c *call, _ noArgs) (any, error) {
	ps, err := s.boards.ListProjects(ctx, c.caller)
	if err != nil {
		return nil, err
	}
	mine, other := []projectView{}, []projectView{}
	for _, l := range ps.Projects {
		mine = append(mine, viewProject(l.Project, l.Access))
	}
	for _, p := range ps.NotJoined {
		other = append(other, viewProject(p, ""))
	}
	return map[string]any{"projects": mine, "not_joined": other, "untrusted": true}, nil
}

type projectIn struct {
	ProjectID string `json:"project_id"`
}

type memberView struct {
	Handle string `json:"handle"`
	Name   string `json:"name,omitempty"`
	Role   string `json:"role"` // owner or member
}

type projectAgentView struct {
	Handle string `json:"handle"`
	Access string `json:"access"`
	Review bool   `json:"review,omitempty"`
}

type threadView struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	ItemID         string `json:"item_id,omitempty"`
	LastSeq        int64  `json:"last_seq"`
	UpdatedAt      string `json:"updated_at"`
}

type itemView struct {
	ItemID         string `json:"item_id"`
	Kind           string `json:"kind"`
	Title          string `json:"title"`
	Status         string `json:"status"`
	Note           string `json:"note,omitempty"`
	URL            string `json:"url,omitempty"`
	ConversationID string `json:"conversation_id,omitempty"` // the item's thread, once opened
	UpdatedAt      string `json:"updated_at"`
}

func viewItem(it *hub.Item, conversationID string) itemView {
	return itemView{ItemID: it.ID, Kind: it.Kind, Title: it.Title, Status: it.Status, Note: it.Note, URL: it.URL,
		ConversationID: conversationID, UpdatedAt: timeText(it.UpdatedAt)}
}

func (s *Server) getProject(ctx context.Context, c *call, in projectIn) (any, error) {
	d, err := s.hub.GetProject(ctx, c.caller, in.ProjectID)
	if err != nil {
		return nil, err
	}
	members := []memberView{}
	for _, m := range d.Members {
		role := hub.RoleMember
		if m.UserID == d.Project.OwnerID {
			role = hub.RoleOwner
		}
		members = append(members, memberView{Handle: m.Handle, Name: m.Name, Role: role})
	}
	agents := []projectAgentView{}
	for _, a := range d.Agents {
		agents = append(agents, projectAgentView{Handle: a.Handle, Access: a.Access, Review: a.Review})
	}
	threads := []threadView{}
	itemThreads := map[string]string{}
	for _, t := range d.Threads {
		threads = append(threads, threadView{ConversationID: t.ID, Title: t.Title, ItemID: t.ItemID, LastSeq: t.LastSeq, UpdatedAt: timeText(t.UpdatedAt)})
		if t.ItemID != "" {
			itemThreads[t.ItemID] = t.ID
		}
	}
	items := []itemView{}
	for _, it := range d.Items {
		items = append(items, viewItem(it, itemThreads[it.ID]))
	}
	return map[string]any{"project": viewProject(d.Project, d.Access), "members": members, "agents": agents,
		"threads": threads, "items": items, "untrusted": true}, nil
}

type createProjectIn struct {
	Name        string `json:"name" jsonschema:"what the project is called, 1-{max} characters"`
	Description string `json:"description,omitempty" jsonschema:"what it is for, up to {max} characters"`
	Reason      string `json:"reason,omitempty" jsonschema:"why you propose it, for your owner"`
	Instance    string `json:"instance,omitempty" jsonschema:"your session's name"`
}

func (s *Server) createProject(ctx context.Context, c *call, in createProjectIn) (any, error) {
	r, err := s.boards.ProposeProject(ctx, c.caller, in.Name, in.Description, in.Reason, in.Instance)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": hub.StatusPendingApproval, "request_id": r.ID}, nil
}

type requestProjectAccessIn struct {
	ProjectID string `json:"project_id" jsonschema:"the project, from not_joined in list_projects"`
	Reason    string `json:"reason,omitempty" jsonschema:"why you need to be in it, for your owner"`
}

func (s *Server) requestProjectAccess(ctx context.Context, c *call, in requestProjectAccessIn) (any, error) {
	r, err := s.boards.RequestProjectAccess(ctx, c.caller, in.ProjectID, in.Reason)
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": hub.StatusPendingApproval, "request_id": r.ID}, nil
}

type openThreadIn struct {
	ProjectID string `json:"project_id"`
	Title     string `json:"title,omitempty" jsonschema:"the thread's title: the same title finds the same thread"`
	ItemID    string `json:"item_id,omitempty" jsonschema:"instead of a title: the item whose thread this is"`
}

func (s *Server) openThread(ctx context.Context, c *call, in openThreadIn) (any, error) {
	v, err := s.hub.OpenThread(ctx, c.caller, in.ProjectID, in.Title, in.ItemID)
	if err != nil {
		return nil, err
	}
	c.conversation = v.Conversation.ID
	return map[string]any{"status": hub.StatusOpen, "conversation_id": v.Conversation.ID, "conversation": viewConversation(v), "untrusted": true}, nil
}

type addItemIn struct {
	ProjectID string `json:"project_id"`
	Title     string `json:"title" jsonschema:"what the item is, 1-{max} characters"`
	Kind      string `json:"kind,omitempty" jsonschema:"task, repo, site, asset, link or note"`
	Note      string `json:"note,omitempty" jsonschema:"more about it, up to {max} characters"`
	URL       string `json:"url,omitempty" jsonschema:"where it lives: an http or https URL"`
	Instance  string `json:"instance,omitempty" jsonschema:"your session's name, recorded with the change"`
}

func (s *Server) addItem(ctx context.Context, c *call, in addItemIn) (any, error) {
	v, err := s.boards.AddItem(ctx, c.caller, in.ProjectID, projects.ItemSpec{Title: in.Title, Kind: in.Kind, Note: in.Note, URL: in.URL, Instance: in.Instance})
	if err != nil {
		return nil, err
	}
	return viewItemResult(v), nil
}

type updateItemIn struct {
	ProjectID string  `json:"project_id"`
	ItemID    string  `json:"item_id"`
	Status    *string `json:"status,omitempty" jsonschema:"open, doing, done or dropped"`
	Title     *string `json:"title,omitempty" jsonschema:"a new title, 1-{max} characters"`
	Note      *string `json:"note,omitempty" jsonschema:"a new note, up to {max} characters"`
	URL       *string `json:"url,omitempty" jsonschema:"a new url"`
	Instance  string  `json:"instance,omitempty" jsonschema:"your session's name, recorded with the change"`
}

func (s *Server) updateItem(ctx context.Context, c *call, in updateItemIn) (any, error) {
	v, err := s.boards.UpdateItem(ctx, c.caller, in.ProjectID, in.ItemID, projects.ItemEdit{Status: in.Status, Title: in.Title, Note: in.Note, URL: in.URL, Instance: in.Instance})
	if err != nil {
		return nil, err
	}
	return viewItemResult(v), nil
}

type itemChangeView struct {
	By       string            `json:"by"`
	Instance string            `json:"instance,omitempty"`
	Changes  map[string]string `json:"changes"`
	At       string            `json:"at"`
}

// viewItemResult is an item with its history, as add_item and update_item
// return it.
func viewItemResult(v *hub.ItemView) map[string]any {
	history := []itemChangeView{}
	for _, ch := range v.History {
		history = append(history, itemChangeView{By: ch.ByHandle, Instance: ch.Instance, Changes: ch.Changes, At: timeText(ch.At)})
	}
	return map[string]any{"item": viewItem(v.Item, v.ConversationID), "history": history, "untrusted": true}
}

type uploadImageIn struct {
	ProjectID  string `json:"project_id"`
	DataBase64 string `json:"data_base64" jsonschema:"the image's bytes in base64"`
	Filename   string `json:"filename,omitempty" jsonschema:"its name, a label only"`
	Alt        string `json:"alt,omitempty" jsonschema:"what it shows, for people who cannot see it"`
}

func (s *Server) uploadImage(ctx context.Context, c *call, in uploadImageIn) (any, error) {
	img, markdown, err := s.boards.UploadImage(ctx, c.caller, in.ProjectID, projects.ImageUpload{DataBase64: in.DataBase64, Filename: in.Filename, Alt: in.Alt})
	if err != nil {
		return nil, err
	}
	return map[string]any{"image_id": img.ID, "markdown": markdown, "mime": img.MIME, "size": img.Size}, nil
}
