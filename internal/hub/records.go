package hub

import (
	"encoding/json"
	"time"
)

// The records the Store reads and writes (DESIGN.md §1–§9), with the
// constants of their fields.

// User is a person (§1).
type User struct {
	ID        string // usr_…
	Handle    string // 2–39 of [a-z0-9-], starting with [a-z0-9]
	Name      string // display name, a label only
	Email     string // on their profile, as they gave it ("" for none); verified by nobody
	Admin     bool   // may set how people join, and invite them (§11.1)
	CreatedAt time.Time
	// TimeZone is the IANA name of the person's time zone, in which their
	// quiet hours are read (§19); "" is UTC.
	TimeZone string
}

// Login is a person signed in to the dashboard from one browser (§11.1):
// the cookie holds its secret, the store only its hash.
type Login struct {
	ID         string // lgn_…
	Hash       []byte
	UserID     string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastSeenAt time.Time
}

// Invite is a one-time link to make an account (§11.1).
type Invite struct {
	ID        string // inv_…
	Hash      []byte
	CreatedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time
	UsedBy    string
}

// Agent modes (§1).
const (
	ModeActive = "active"
	ModeReview = "review"
	ModeListen = "listen"
)

// Modes lists the agent modes, the first the default.
var Modes = []string{ModeActive, ModeReview, ModeListen}

// Agent belongs to exactly one owner (§1).
type Agent struct {
	ID          string // agt_…
	OwnerID     string
	OwnerHandle string
	Slug        string // 1–40 of [a-z0-9-]
	Name        string // display name it was registered with ("" for none: DisplayName is its slug)
	Description string
	Goal        string
	Mode        string
	Public      bool      // anyone may reach it without a grant (§1, §3)
	ArchivedAt  time.Time // zero while active
	CreatedAt   time.Time
}

// Handle is "owner/slug".
func (a *Agent) Handle() string { return a.OwnerHandle + "/" + a.Slug }

// Archived reports whether the owner archived the agent.
func (a *Agent) Archived() bool { return !a.ArchivedAt.IsZero() }

// Instance is a named session of an agent (§5).
type Instance struct {
	Name     string
	Note     string
	LastSeen time.Time
}

// Token is a static credential (§2). Only the SHA-256 hash of the secret is
// stored.
type Token struct {
	ID         string // tok_…
	Hash       []byte
	UserID     string
	AgentID    string // "" for a user token
	Name       string
	Scopes     []string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	LastUsedAt time.Time
	RevokedAt  time.Time
	GrantID    string // the OAuth grant it was issued under ("" for a static token)
	Resource   string // the resource an OAuth token is for (§10.6)
	// Successor is, for a refresh token used once, the tokens it was
	// rotated into, sealed with a key only the refresh token gives
	// (sealSuccessor); nil otherwise, and once RefreshGrace is long past.
	Successor []byte
}

// Conversation kinds and statuses (§4).
const (
	KindDirect = "direct"
	KindGroup  = "group"
	KindThread = "thread"

	StatusOpen           = "open"
	StatusCloseRequested = "close_requested"
	StatusClosed         = "closed"
	StatusPaused         = "paused" // shown, not stored: open but paused by the brake (§7)
)

// Conversation is one direct, group or thread conversation (§4).
type Conversation struct {
	ID        string // conv_…
	Kind      string
	Title     string
	Goal      string
	Status    string
	DirectKey string // sorted participant ids of a direct conversation
	// A thread's project, its item when it is an item's thread, and the key
	// that finds it again (the trimmed, case-folded title, or the item).
	ProjectID string
	ItemID    string
	ThreadKey string
	CreatorID string
	CreatedAt time.Time
	UpdatedAt time.Time // time of the last message or change
	LastSeq   int64

	// Brake state (§7): since a person last took part, how many turns agents
	// traded and whose voice spoke last; a pause and its reason.
	LastPersonAt time.Time
	AgentTurns   int
	LastVoice    string
	PausedAt     time.Time
	PausedReason string

	// ByMention makes the conversation a room (§10.5): a text message in
	// it is work — a delivery, an inbox row, a processing state — only for
	// the agents it mentions; everyone still sees it in the history.
	ByMention bool
}

// State is the status to show: paused while the brake holds an unclosed
// conversation (PausedReason says why), else its status.
func (c *Conversation) State() string {
	if c.Status != StatusClosed && !c.PausedAt.IsZero() {
		return StatusPaused
	}
	return c.Status
}

// Principal kinds.
const (
	PrincipalUser  = "user"
	PrincipalAgent = "agent"
)

// Participant roles (§4).
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Participant is a principal's membership of a conversation.
type Participant struct {
	ConversationID string
	PrincipalID    string
	Kind           string // PrincipalUser or PrincipalAgent
	Handle         string // filled by reads
	OwnerID        string // the agent's owner; the user's own id for users
	Role           string
	JoinedAt       time.Time
	Archived       bool // filled by reads: the agent is archived
	Public         bool // filled by reads: the agent is public (§1)
}

// ConversationView is a conversation with its current participants.
type ConversationView struct {
	Conversation *Conversation
	Participants []Participant
}

// Listed is the participants a face may show: archived agents are listed
// nowhere (§1).
func (v *ConversationView) Listed() []Participant {
	var out []Participant
	for _, p := range v.Participants {
		if !p.Archived {
			out = append(out, p)
		}
	}
	return out
}

// Message is one stored message (§4).
type Message struct {
	ID             string // msg_…
	ConversationID string
	Seq            int64  // 0 while held for review
	Status         string // MessageSent, MessageHeld or MessageRejected
	SenderID       string
	SenderKind     string
	SenderHandle   string
	SenderInstance string
	Body           string
	Summary        string
	Format         string
	Kind           string
	Metadata       json.RawMessage // a JSON object, or nil
	Mentions       []string
	ReplyToSeq     int64
	NoReply        bool
	ToInstance     string
	ClientMsgID    string
	Author         string // "human" or "agent"
	Authority      string
	OwnerID        string // on_behalf_of: the verified owner
	OwnerHandle    string
	CreatedAt      time.Time
	OriginalBody   string    // the agent's words when the owner edited them (§7): filled only for that owner (withOriginals)
	DecidedBy      string    // the owner who approved or rejected a held message
	DecidedAt      time.Time // when
	RemoteURL      string    // the card URL of the remote A2A agent whose answer this is (§18); "" for any other
}

// Message statuses (§7 review).
const (
	MessageSent     = "sent"
	MessageHeld     = "held"
	MessageRejected = "rejected"
)

// Contact is the relation between two people (§3); UserA < UserB.
type Contact struct {
	ID           string // ct_…: names the request under approvals
	UserA, UserB string
	Status       string // ContactPending, ContactAccepted, ContactRejected, ContactCancelled, ContactRemoved
	RequestedBy  string
	DecidedBy    string
	RequestedAt  time.Time
	DecidedAt    time.Time
	// Message is what the one who asked said with the request ("" for
	// nothing), at most MaxContactMessage code points.
	Message string
}

// Contact statuses.
const (
	ContactPending   = "pending"
	ContactAccepted  = "accepted"
	ContactRejected  = "rejected"
	ContactCancelled = "cancelled"
	// ContactRemoved: one of the two ended the contact (DecidedBy, at
	// DecidedAt); either may ask again, and the other decides.
	ContactRemoved = "removed"
)

// Other is the other person of the pair.
func (c *Contact) Other(userID string) string {
	if c.UserA == userID {
		return c.UserB
	}
	return c.UserA
}

// Grant is an owner's grant to its agent of reach to a contact's side (§3).
type Grant struct {
	AgentID     string
	ContactID   string
	AllowHuman  bool
	AllowAgents bool
	DecidedBy   string
	UpdatedAt   time.Time
}

// GrantRequest is an agent asking its owner for a grant (§3).
type GrantRequest struct {
	ID            string // gr_…
	AgentID       string
	OwnerID       string
	ContactID     string
	ContactHandle string // filled by reads
	AllowHuman    bool
	AllowAgents   bool
	Reason        string
	Status        string // AskPending, AskApproved, GrantRejected, GrantCancelled
	CreatedAt     time.Time
	DecidedAt     time.Time
}

// Grant request statuses besides AskPending and AskApproved.
const (
	GrantRejected  = "rejected"
	GrantCancelled = "cancelled" // withdrawn by the agent before its owner decided
)

// InboundAsk is another owner's agent asking a person to be let in (§3).
type InboundAsk struct {
	ID        string // in_…
	AgentID   string
	UserID    string
	Handles   []string // the open_conversation it asked for
	Status    string   // pending, approved, denied
	CreatedAt time.Time
	DecidedAt time.Time
}

// Question is an agent's question to its owner (§9).
type Question struct {
	ID             string // q_…
	AgentID        string
	AgentHandle    string // filled by reads
	OwnerID        string
	Instance       string
	ConversationID string
	Question       string
	Options        []string
	Answer         string
	AnsweredAt     time.Time
	AckedAt        time.Time
	CreatedAt      time.Time
}

// Delivery states (§5): waiting, then an attempt (processing), then done
// (acknowledged) or failed (the attempt's error kept; still waiting).
const (
	DeliveryWaiting    = "waiting"
	DeliveryProcessing = "processing"
	DeliveryDone       = "done"
	DeliveryFailed     = "failed"
	// DeliveryWithdrawn: the agent lost access to the conversation before
	// acknowledging; the message left its inbox (message.withdrawn).
	DeliveryWithdrawn = "withdrawn"
)

// Delivery is one recipient agent's copy of a message (§5).
type Delivery struct {
	MessageID string
	AgentID   string
	State     string
	Attempts  int       // attempts started (or failed) so far
	Error     string    // the last failed attempt's error
	StartedAt time.Time // the processing attempt's start; zero when none runs
	FetchedAt time.Time
	AckedAt   time.Time
}

// InboxItem is a waiting delivery with its message.
type InboxItem struct {
	Delivery Delivery
	Message  *Message
	// HeldBy is the live session holding the conversation ("" when nobody
	// does: unclaimed).
	HeldBy string
	// Sibling: the agent's own words from another session, waiting for this
	// session past its place; there is no delivery to acknowledge.
	Sibling bool
}

// AlreadyRead tells a second look from new mail (§5): the message's body
// was handed over to the agent (read_message, or read_messages with
// mark_read) and no mark_unread has made it new again since. Every face
// and profile shows this one answer.
func (it InboxItem) AlreadyRead() bool { return !it.Delivery.FetchedAt.IsZero() }

// SessionFilter narrows an inbox to one named session (§5), and says which
// attempts are stuck.
type SessionFilter struct {
	Instance  string    // "" for the agent as a whole
	LiveSince time.Time // holders last seen at or before this have let go
	// StuckSince: a processing attempt started at or before this is stuck
	// and comes first.
	StuckSince time.Time
}

// Hold is a session holding a conversation (§5).
type Hold struct {
	ConversationID string
	Instance       string
	Since          time.Time
	LastSeen       time.Time // the session's last sighting
}

// Read is a principal's (or named session's) place in a conversation.
type Read struct {
	PrincipalID string
	Handle      string
	Instance    string
	LastReadSeq int64
	UpdatedAt   time.Time
}

// Event types (§6).
const (
	EventMessageNew         = "message.new"
	EventConversationOpened = "conversation.opened"
	EventConversationClosed = "conversation.closed"
	EventConversationResume = "conversation.resumed"
	EventMessagePending     = "message.pending"
	EventPendingDecided     = "pending.decided"
	EventOwnerAnswer        = "owner.answer"
	EventGrantChanged       = "grant.changed"
	EventGrantRequest       = "grant.request"
	EventInboundAsk         = "inbound.ask"
	EventInboundDecided     = "inbound.decided"
	EventContactRequest     = "contact.request"
	EventContactAccepted    = "contact.accepted"
	EventProjectRequest     = "project.request"  // to an owner: its agent proposes a project or asks into one
	EventProjectApproved    = "project.approved" // to the agent: its request was approved
	EventProjectRejected    = "project.rejected"
	EventProjectAgents      = "project.agents"       // to the agent: brought in, taken out, or its access changed
	EventMessageWithdrawn   = "message.withdrawn"    // to the agent: a message queued for it left with its access; no body
	EventQuestionAsked      = "question.asked"       // to an owner: its agent asks it something (§9)
	EventConversationPaused = "conversation.paused"  // to the people concerned: agents traded too many turns (§7)
	EventApprovalDecided    = "approval.decided"     // to the person who decided, or whose agent withdrew its request: their pages and scripts hear it no longer waits (§9)
	EventAgentSent          = "agent.sent"           // to an owner not taking part: its agent's message was delivered (§6, §11 Bridge)
	EventBrakeTripped       = "brake.tripped"        // to an owner: a brake refused its agent's send; data has the brake's word (§7)
	EventClaimed            = "conversation.claimed" // to an owner: a session of its agent took a conversation (§5)
	EventWebhookDisabled    = "webhook.disabled"     // to an owner: its agent's endpoint failed for a day and was switched off (§18)
)

// Event is one entry of a recipient's stream (§6).
type Event struct {
	ID             int64
	Tx             int64 // with ID, its place in the log (Pos)
	RecipientID    string
	Type           string
	ConversationID string
	MessageID      string
	Data           json.RawMessage // type-specific payload, or nil
	CreatedAt      time.Time
	Message        *Message // filled by EventsAfter for message.new, and when deliver makes one
}

// Project access of an agent (§8): speak, listen, or off (the project's
// owner turned every agent off).
const (
	AccessSpeak  = "speak"
	AccessListen = "listen"
	AccessOff    = "off"
)

// Project is a piece of work owned by a person (§8).
type Project struct {
	ID          string // proj_…
	OwnerID     string
	OwnerHandle string // filled by reads
	Name        string
	Description string
	// AgentCap is the most any agent may do here: "" (what each agent's
	// owner set), AccessListen or AccessOff.
	AgentCap   string
	Home       bool // the owner's home project (§1)
	ArchivedAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ProjectMember is a person in a project.
type ProjectMember struct {
	ProjectID string
	UserID    string
	Handle    string // filled by reads
	Name      string // filled by reads
	AddedAt   time.Time
}

// ProjectAgent is an agent its owner brought into a project.
type ProjectAgent struct {
	ProjectID string
	AgentID   string
	Handle    string // filled by reads
	OwnerID   string // filled by reads: the agent's owner
	Access    string // AccessSpeak or AccessListen, as its owner set it
	Review    bool   // its sends here are held for its owner (§7)
	Archived  bool   // filled by reads: the agent is archived
	AddedAt   time.Time
}

// Project request kinds and statuses (§8).
const (
	RequestProposal = "proposal" // create_project
	RequestAccess   = "access"   // request_project_access

	RequestPending  = "pending"
	RequestApproved = "approved"
	RequestRejected = "rejected"
)

// ProjectRequest is an agent's proposal of a project, or its request to be
// brought into one, waiting on its owner (§8).
type ProjectRequest struct {
	ID          string // pr_…
	Kind        string // RequestProposal or RequestAccess
	AgentID     string
	AgentHandle string // filled by reads
	OwnerID     string
	ProjectID   string // access: the project; proposal: the project approval made
	Name        string // proposal
	Description string // proposal
	Reason      string
	Instance    string
	Status      string
	DecidedBy   string
	CreatedAt   time.Time
	DecidedAt   time.Time
}

// Item kinds and statuses (§8).
var (
	ItemKinds    = []string{"task", "repo", "site", "asset", "link", "note"}
	ItemStatuses = []string{"open", "doing", "done", "dropped"}
)

// Item is a tracked piece of a project (§8).
type Item struct {
	ID        string // item_…
	ProjectID string
	Kind      string
	Title     string
	Note      string
	URL       string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ItemChange is one recorded change of an item: who, from which session,
// and each field's new value.
type ItemChange struct {
	ItemID   string
	ByID     string
	ByHandle string
	Instance string
	Changes  map[string]string
	At       time.Time
}

// Image is a picture stored in a project (§8), its bytes kept by SHA-256.
type Image struct {
	ID         string // img_…
	ProjectID  string
	SHA256     string // hex
	MIME       string
	Size       int
	Filename   string
	Alt        string
	UploadedBy string
	Instance   string
	CreatedAt  time.Time
}

// Skill is one thing an agent's owner says it does, listed on its Agent
// Card (§18). Name and Description are the owner's words: untrusted.
type Skill struct {
	ID          string `json:"id"` // the name, lower-cased, runs of other characters as "-"
	Name        string `json:"name"`
	Description string `json:"description"`
}

// A2AExposure is an agent's A2A setting (§18): whether A2A clients may
// reach it through its Agent Card, and the skills the card lists. An agent
// never set has none: not exposed.
type A2AExposure struct {
	AgentID   string
	Exposed   bool
	Skills    []Skill
	UpdatedAt time.Time
}

// A2ARequest records that a message was an A2A client's request to an
// agent (§18): the message's id is the task's id, and who asked (an agent
// or a person) hears of every change of its processing.
type A2ARequest struct {
	MessageID      string
	AgentID        string
	CallerID       string
	ConversationID string
	CreatedAt      time.Time
}
