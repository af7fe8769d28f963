package export

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// export.json: every field of what was exported, in Palaver's own words.
// Times are RFC 3339 in UTC to the millisecond ("" for never); ids are the
// hub's. docs/owners.md ("Export") describes it field by field.

// Format names the document in its "format" field; Version is its version,
// raised when a field changes meaning or goes.
const (
	Format  = "palaver-export"
	Version = 1
)

// Document is export.json.
type Document struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt string    `json:"exported_at"`
	ExportedBy Principal `json:"exported_by"`
	// Untrusted: bodies, titles, notes and names in it were written by
	// agents and people, and are data, never instructions (§15).
	Untrusted bool `json:"untrusted"`
	// Project is the project exported (absent for a conversation).
	Project *Project `json:"project,omitempty"`
	// Conversations is the conversation exported, or the project's
	// threads, oldest first.
	Conversations []Conversation `json:"conversations"`
}

// Principal names a person or an agent by id and handle.
type Principal struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
}

// Conversation is one conversation with its whole history.
type Conversation struct {
	ConversationID string        `json:"conversation_id"`
	Kind           string        `json:"kind"` // direct, group or thread
	Room           bool          `json:"room"` // routed by mention (§10.5)
	Title          string        `json:"title"`
	Goal           string        `json:"goal"`
	Status         string        `json:"status"` // open, close_requested or paused
	PausedReason   string        `json:"paused_reason,omitempty"`
	ProjectID      string        `json:"project_id,omitempty"`
	ItemID         string        `json:"item_id,omitempty"`
	Creator        Principal     `json:"creator"`
	CreatedAt      string        `json:"created_at"`
	UpdatedAt      string        `json:"updated_at"`
	LastSeq        int64         `json:"last_seq"`
	Participants   []Participant `json:"participants"`
	Messages       []Message     `json:"messages"`
	Reads          []Read        `json:"reads"`
}

// Participant is one taking part in a conversation now.
type Participant struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
	Kind   string `json:"kind"` // user or agent
	Role   string `json:"role"` // owner, admin or member
	// Owner is an agent's owner (absent for a person).
	Owner    *Principal `json:"owner,omitempty"`
	JoinedAt string     `json:"joined_at"`
}

// Message is one delivered message.
type Message struct {
	MessageID      string          `json:"message_id"`
	ConversationID string          `json:"conversation_id"`
	Seq            int64           `json:"seq"`
	Sender         Sender          `json:"sender"`
	Body           string          `json:"body"`
	Summary        string          `json:"summary"`
	Format         string          `json:"format"` // text or markdown
	Kind           string          `json:"kind"`   // text, or an event post's kind
	Metadata       json.RawMessage `json:"metadata,omitempty"`
	Mentions       []string        `json:"mentions"`
	ReplyToSeq     int64           `json:"reply_to_seq,omitempty"`
	NoReply        bool            `json:"no_reply"`
	ToInstance     string          `json:"to_instance,omitempty"`
	ClientMsgID    string          `json:"client_msg_id,omitempty"`
	CreatedAt      string          `json:"created_at"`
	Provenance     hub.Provenance  `json:"provenance"`
	// OriginalBody is the agent's own words when its owner edited them
	// before approving (authority owner_edited, §7).
	OriginalBody string `json:"original_body,omitempty"`
	// DecidedBy and DecidedAt: who let a held message go, and when.
	DecidedBy *Principal `json:"decided_by,omitempty"`
	DecidedAt string     `json:"decided_at,omitempty"`
}

// Sender is who sent a message, and from which session.
type Sender struct {
	ID       string `json:"id"`
	Handle   string `json:"handle"`
	Kind     string `json:"kind"`
	Instance string `json:"instance"`
}

// Read is how far a participant, or a named session of an agent, has read.
type Read struct {
	Principal   Principal `json:"principal"`
	Instance    string    `json:"instance"`
	LastReadSeq int64     `json:"last_read_seq"`
	At          string    `json:"at"`
}

// Project is a project with its people, agents, items and images.
type Project struct {
	ProjectID   string    `json:"project_id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Owner       Principal `json:"owner"`
	Home        bool      `json:"home"`
	AgentCap    string    `json:"agent_cap"` // "", listen or off
	CreatedAt   string    `json:"created_at"`
	UpdatedAt   string    `json:"updated_at"`
	ArchivedAt  string    `json:"archived_at"`
	Members     []Member  `json:"members"`
	Agents      []Agent   `json:"agents"`
	Items       []Item    `json:"items"`
	Images      []Image   `json:"images"`
}

// Member is a person in a project.
type Member struct {
	ID      string `json:"id"`
	Handle  string `json:"handle"`
	Name    string `json:"name"`
	AddedAt string `json:"added_at"`
}

// Agent is an agent brought into a project.
type Agent struct {
	ID      string    `json:"id"`
	Handle  string    `json:"handle"`
	Owner   Principal `json:"owner"`
	Access  string    `json:"access"` // its effective access: speak, listen or off
	Review  bool      `json:"review"`
	AddedAt string    `json:"added_at"`
}

// Item is a tracked piece of a project with every change made to it.
type Item struct {
	ItemID         string   `json:"item_id"`
	Kind           string   `json:"kind"`
	Title          string   `json:"title"`
	Note           string   `json:"note"`
	URL            string   `json:"url"`
	Status         string   `json:"status"`
	ConversationID string   `json:"conversation_id"` // its thread, "" when none was opened
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
	History        []Change `json:"history"`
}

// Change is one recorded change of an item: who, from which session, and
// each field's new value.
type Change struct {
	By       Principal         `json:"by"`
	Instance string            `json:"instance"`
	Changes  map[string]string `json:"changes"`
	At       string            `json:"at"`
}

// Image is a project's image; File is where the archive holds its bytes.
type Image struct {
	ImageID    string    `json:"image_id"`
	File       string    `json:"file"`
	Filename   string    `json:"filename"`
	Alt        string    `json:"alt"`
	MIME       string    `json:"mime"`
	Size       int       `json:"size"`
	SHA256     string    `json:"sha256"`
	UploadedBy Principal `json:"uploaded_by"`
	Instance   string    `json:"instance"`
	CreatedAt  string    `json:"created_at"`
}

var at = hub.FormatTime

// NewDocument is export.json of e.
func NewDocument(e *Export) *Document {
	name := func(id string) Principal { return Principal{ID: id, Handle: e.Names[id]} }
	d := &Document{Format: Format, Version: Version, ExportedAt: at(e.At), ExportedBy: name(e.By.ID), Untrusted: true,
		Conversations: []Conversation{}}
	if pe := e.Project; pe != nil {
		p := pe.Project
		d.Project = &Project{ProjectID: p.ID, Name: p.Name, Description: p.Description, Owner: name(p.OwnerID), Home: p.Home,
			AgentCap: p.AgentCap, CreatedAt: at(p.CreatedAt), UpdatedAt: at(p.UpdatedAt), ArchivedAt: at(p.ArchivedAt),
			Members: []Member{}, Agents: []Agent{}, Items: []Item{}, Images: []Image{}}
		for _, m := range pe.Members {
			d.Project.Members = append(d.Project.Members, Member{ID: m.UserID, Handle: m.Handle, Name: m.Name, AddedAt: at(m.AddedAt)})
		}
		for _, a := range pe.Agents {
			d.Project.Agents = append(d.Project.Agents, Agent{ID: a.AgentID, Handle: a.Handle, Owner: name(a.OwnerID), Access: a.Access,
				Review: a.Review, AddedAt: at(a.AddedAt)})
		}
		for _, iv := range pe.Items {
			it := iv.Item
			item := Item{ItemID: it.ID, Kind: it.Kind, Title: it.Title, Note: it.Note, URL: it.URL, Status: it.Status,
				ConversationID: iv.ConversationID, CreatedAt: at(it.CreatedAt), UpdatedAt: at(it.UpdatedAt), History: []Change{}}
			for _, c := range iv.History {
				item.History = append(item.History, Change{By: Principal{ID: c.ByID, Handle: c.ByHandle}, Instance: c.Instance,
					Changes: c.Changes, At: at(c.At)})
			}
			d.Project.Items = append(d.Project.Items, item)
		}
		for _, img := range pe.Images {
			d.Project.Images = append(d.Project.Images, Image{ImageID: img.ID, File: ImageFile(img), Filename: img.Filename, Alt: img.Alt,
				MIME: img.MIME, Size: img.Size, SHA256: img.SHA256, UploadedBy: name(img.UploadedBy), Instance: img.Instance,
				CreatedAt: at(img.CreatedAt)})
		}
	}
	for _, ce := range e.Conversations {
		c := ce.Conversation
		conv := Conversation{ConversationID: c.ID, Kind: c.Kind, Room: c.ByMention, Title: c.Title, Goal: c.Goal, Status: c.State(),
			ProjectID: c.ProjectID, ItemID: c.ItemID, Creator: name(c.CreatorID), CreatedAt: at(c.CreatedAt), UpdatedAt: at(c.UpdatedAt),
			LastSeq: c.LastSeq, Participants: []Participant{}, Messages: []Message{}, Reads: []Read{}}
		if c.State() == hub.StatusPaused {
			conv.PausedReason = c.PausedReason
		}
		for _, p := range ce.Participants {
			part := Participant{ID: p.PrincipalID, Handle: p.Handle, Kind: p.Kind, Role: p.Role, JoinedAt: at(p.JoinedAt)}
			if p.Kind == hub.PrincipalAgent {
				owner := name(p.OwnerID)
				part.Owner = &owner
			}
			conv.Participants = append(conv.Participants, part)
		}
		for _, m := range ce.Messages {
			msg := Message{MessageID: m.ID, ConversationID: m.ConversationID, Seq: m.Seq,
				Sender: Sender{ID: m.SenderID, Handle: m.SenderHandle, Kind: m.SenderKind, Instance: m.SenderInstance},
				Body:   m.Body, Summary: m.Summary, Format: m.Format, Kind: m.Kind, Metadata: m.Metadata, Mentions: m.Mentions,
				ReplyToSeq: m.ReplyToSeq, NoReply: m.NoReply, ToInstance: m.ToInstance, ClientMsgID: m.ClientMsgID,
				CreatedAt: at(m.CreatedAt), Provenance: m.Provenance(), OriginalBody: m.OriginalBody, DecidedAt: at(m.DecidedAt)}
			if msg.Mentions == nil {
				msg.Mentions = []string{}
			}
			if m.DecidedBy != "" {
				by := name(m.DecidedBy)
				msg.DecidedBy = &by
			}
			conv.Messages = append(conv.Messages, msg)
		}
		for _, r := range ce.Reads {
			conv.Reads = append(conv.Reads, Read{Principal: Principal{ID: r.PrincipalID, Handle: r.Handle}, Instance: r.Instance,
				LastReadSeq: r.LastReadSeq, At: at(r.UpdatedAt)})
		}
		d.Conversations = append(d.Conversations, conv)
	}
	return d
}

// writeJSON writes export.json of e, indented, with "<", ">" and "&" as
// they are (it is a file, not a page).
func writeJSON(w io.Writer, e *Export) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(NewDocument(e))
}

// ImageFile is where the archive holds an image: images/ID.EXT, the
// extension from its type (its filename was chosen by whoever uploaded it).
func ImageFile(img *hub.Image) string {
	ext := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, strings.TrimPrefix(img.MIME, "image/"))
	if ext == "jpeg" {
		ext = "jpg"
	}
	return "images/" + img.ID + "." + ext
}
