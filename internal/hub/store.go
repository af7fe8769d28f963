package hub

import (
	"context"
	"time"
)

// Store is what the hub needs from persistence (DESIGN.md §13). Reads go to a
// read pool; every write runs inside Update, which the SQLite store commits in
// groups on one writer goroutine. Implementations return ErrNoRows for a
// missing row and ErrDuplicate for a unique-constraint refusal (wrapped or
// not); every other error is internal.
type Store interface {
	Reader
	// Update runs fn in one write transaction and returns once it committed
	// (fn's error, or the commit's). fn must not keep tx after it returns.
	// Nothing fn wrote is visible to anyone if Update returns an error.
	Update(ctx context.Context, fn func(tx Tx) error) error
}

// Reader holds every query the hub makes. Times are UTC; a zero time.Time
// means "never" or "not set".
type Reader interface {
	PresenceReader
	PermissionReader
	Meta(ctx context.Context, key string) (string, error)

	UserByID(ctx context.Context, id string) (*User, error)
	UserByHandle(ctx context.Context, handle string) (*User, error)
	// Users lists every person, oldest first.
	Users(ctx context.Context) ([]*User, error)
	// PasswordHash is the person's password hash ("" when none is set).
	PasswordHash(ctx context.Context, userID string) (string, error)
	// LoginByHash finds a dashboard sign-in by its secret's hash.
	LoginByHash(ctx context.Context, hash []byte) (*Login, error)
	InviteByHash(ctx context.Context, hash []byte) (*Invite, error)
	AgentByID(ctx context.Context, id string) (*Agent, error)
	AgentByHandle(ctx context.Context, owner, slug string) (*Agent, error)
	// Agents lists the owner's agents (all owners when ownerID is ""), oldest
	// first, archived ones only when includeArchived.
	Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*Agent, error)
	// PublicAgents lists every public agent no one archived (§1), by
	// handle.
	PublicAgents(ctx context.Context) ([]*Agent, error)
	Instances(ctx context.Context, agentID string) ([]Instance, error)
	// A2AExposure is the agent's A2A setting (§18); ErrNoRows when it was
	// never set.
	A2AExposure(ctx context.Context, agentID string) (*A2AExposure, error)
	// ExposedAgents lists the owner's agents exposed over A2A that are not
	// archived, by slug.
	ExposedAgents(ctx context.Context, ownerID string) ([]*Agent, error)
	// A2ARequest finds the A2A request a message is (ErrNoRows: none).
	A2ARequest(ctx context.Context, messageID string) (*A2ARequest, error)
	// A2ACallers lists who sent A2A requests to the agent in a
	// conversation, each once.
	A2ACallers(ctx context.Context, conversationID, agentID string) ([]string, error)

	// TokenByHash finds a token with, in the same read, its agent (nil for
	// a person's token) and its user (an agent token's owner).
	TokenByHash(ctx context.Context, hash []byte) (*Token, *Agent, *User, error)
	TokenByID(ctx context.Context, id string) (*Token, error)
	// Tokens lists a user's static tokens (not OAuth ones), of one agent
	// when agentID is not "".
	Tokens(ctx context.Context, userID, agentID string) ([]*Token, error)
	OAuthClient(ctx context.Context, id string) (*OAuthClient, error)
	OAuthGrant(ctx context.Context, id string) (*OAuthGrant, error)
	// OAuthGrants lists the agent's grants not revoked, newest first, with
	// their client's name and their tokens' last use.
	OAuthGrants(ctx context.Context, agentID string) ([]*OAuthGrant, error)
	OAuthCodeByHash(ctx context.Context, hash []byte) (*OAuthCode, error)

	Conversation(ctx context.Context, id string) (*Conversation, error)
	// ConversationView is Conversation and its Participants in one read.
	ConversationView(ctx context.Context, id string) (*ConversationView, error)
	// TakesPart reports whether the principal takes part in the
	// conversation and it is not closed: access without loading the
	// conversation, whatever its size.
	TakesPart(ctx context.Context, conversationID, principalID string) (bool, error)
	// DirectConversation finds the open or close-requested direct
	// conversation whose participant set has this key.
	DirectConversation(ctx context.Context, key string) (*Conversation, error)
	// Participants lists the current (not left) participants, oldest first,
	// with their handle and whether the agent is archived.
	Participants(ctx context.Context, conversationID string) ([]Participant, error)
	// ConversationsOf lists the conversations the principal takes part in that
	// are not closed, most recently active first, from before (updated time,
	// then id) on when not zero.
	ConversationsOf(ctx context.Context, principalID string, before time.Time, beforeID string, limit int) ([]*Conversation, error)
	// OwnersConversations lists the conversations that are not closed in
	// which the person or one of their agents takes part, most recently
	// active first, from before (updated time, then id) on when not zero.
	OwnersConversations(ctx context.Context, ownerID string, before time.Time, beforeID string, limit int) ([]*Conversation, error)

	Message(ctx context.Context, id string) (*Message, error)
	MessageBySeq(ctx context.Context, conversationID string, seq int64) (*Message, error)
	MessageByClientID(ctx context.Context, senderID, clientMsgID string) (*Message, error)
	// OriginalBodies returns, by message id, the agent's own words of each
	// message of ids that its owner edited before letting it go. No other
	// read fills Message.OriginalBody: only the hub's rule hands them over
	// (§7 review, originals).
	OriginalBodies(ctx context.Context, ids []string) (map[string]string, error)
	// Messages returns up to limit messages with seq > afterSeq, in seq order.
	Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*Message, error)
	// MessagesWhere is a page of a conversation's messages, by seq, from
	// offset: only of kind when kind is not "", only those created after
	// since when it is not zero; with how many there are in all.
	MessagesWhere(ctx context.Context, conversationID, kind string, since time.Time, offset, limit int) ([]*Message, int, error)
	// Work is a page of the agent's deliveries in one conversation whose
	// state is one of states, oldest first, from offset, with their
	// messages and how many there are in all (§10.5).
	Work(ctx context.Context, agentID, conversationID string, states []string, offset, limit int) ([]InboxItem, int, error)
	// ChatContext is a page of a conversation's sent messages, by seq,
	// from offset, that agentID sent or that are text mentioning handle;
	// with how many there are in all (§10.5).
	ChatContext(ctx context.Context, conversationID, agentID, handle string, offset, limit int) ([]*Message, int, error)
	// SearchMessages ranks the newest search.Window sent messages
	// matching f.Query in the conversations f reads, narrowed as f says:
	// best match first, ties newest first, at most limit (§18). Every
	// message is indexed in the transaction that makes it sent, with its
	// final words.
	SearchMessages(ctx context.Context, f SearchFilter, limit int) ([]*Message, error)
	// Unread counts messages past the principal's place (instance "") not
	// written by it.
	Unread(ctx context.Context, conversationID, principalID string) (int, error)
	Reads(ctx context.Context, conversationID string) ([]Read, error)

	Delivery(ctx context.Context, agentID, messageID string) (*Delivery, error)
	// Inbox returns the agent's oldest limit waiting (unacknowledged)
	// deliveries in open conversations, with their messages and live holders,
	// and how many wait in all. With f.Instance it keeps only those waiting
	// for that session (§5): addressed to it or to nobody, and then not in a
	// conversation held by another session seen since f.LiveSince.
	Inbox(ctx context.Context, agentID string, f SessionFilter, limit int) (items []InboxItem, total int, err error)
	// SiblingWords returns the agent's own messages written by its other
	// named sessions in open group and thread conversations since the
	// session was first seen and past its place (oldest first, at most
	// limit), and how many there are (§5).
	SiblingWords(ctx context.Context, agentID, instance string, limit int) ([]*Message, int, error)
	// Holds lists the agent's holds, each with its session's last-seen time.
	Holds(ctx context.Context, agentID string) ([]Hold, error)
	// Hold is the agent's hold on one conversation, with its session's
	// last-seen time (ErrNoRows: none of its sessions holds it).
	Hold(ctx context.Context, agentID, conversationID string) (Hold, error)

	// CountSent counts, in one query, the sender's messages in a
	// conversation that were sent or are held: same, those with exactly
	// this body created after sameSince (all when zero), and recent, all
	// created after recentSince. Each count stops at max, so a brake's check
	// costs the same however long the history.
	CountSent(ctx context.Context, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error)
	// Voices lists the voices (sender id + "/" + instance) of the agent
	// messages sent in a conversation after since, in seq order.
	Voices(ctx context.Context, conversationID string, since time.Time) ([]string, error)
	// HeldMessages lists the messages held for the owner's review, oldest
	// first.
	HeldMessages(ctx context.Context, ownerID string) ([]*Message, error)
	Question(ctx context.Context, id string) (*Question, error)
	// PendingQuestions lists the owner's unanswered questions, oldest first.
	PendingQuestions(ctx context.Context, ownerID string) ([]*Question, error)
	// Answers lists the agent's answered, unacknowledged questions, oldest
	// first; only those asked by the session when instance is not "".
	Answers(ctx context.Context, agentID, instance string) ([]*Question, error)

	// Contact returns the pair's contact row (either order of ids).
	Contact(ctx context.Context, userA, userB string) (*Contact, error)
	// ContactsOf lists the rows involving the person, oldest first.
	ContactsOf(ctx context.Context, userID string) ([]*Contact, error)
	Grant(ctx context.Context, agentID, contactID string) (*Grant, error)
	GrantsOf(ctx context.Context, agentID string) ([]*Grant, error)
	GrantRequest(ctx context.Context, id string) (*GrantRequest, error)
	// GrantRequests lists pending requests, of an owner's agents (ownerID)
	// or of one agent (agentID), oldest first.
	GrantRequests(ctx context.Context, ownerID, agentID string) ([]*GrantRequest, error)
	// AgentGrantRequests lists every request of the agent, whatever its
	// status, oldest first.
	AgentGrantRequests(ctx context.Context, agentID string) ([]*GrantRequest, error)
	InboundAsk(ctx context.Context, agentID, userID string) (*InboundAsk, error)
	InboundAskByID(ctx context.Context, id string) (*InboundAsk, error)
	// InboundAsks lists the asks made of the person, oldest first: only
	// those waiting when pending, else every one (decided ones may be
	// changed).
	InboundAsks(ctx context.Context, userID string, pending bool) ([]*InboundAsk, error)
	// ContactByID finds a contact row by the id its request was given.
	ContactByID(ctx context.Context, id string) (*Contact, error)

	Project(ctx context.Context, id string) (*Project, error)
	// ProjectsOf lists the projects that are not archived which the person
	// is a member of, or the agent was brought into: the home project first,
	// then oldest first.
	ProjectsOf(ctx context.Context, principalID string) ([]*Project, error)
	// ProjectMembers lists a project's people, first added first.
	ProjectMembers(ctx context.Context, projectID string) ([]ProjectMember, error)
	// ProjectAgents lists the agents brought into a project, archived ones
	// included (Archived says so).
	ProjectAgents(ctx context.Context, projectID string) ([]ProjectAgent, error)
	ProjectAgent(ctx context.Context, projectID, agentID string) (*ProjectAgent, error)
	ProjectRequest(ctx context.Context, id string) (*ProjectRequest, error)
	// PendingProjectRequests lists the proposals and access requests
	// waiting for the owner, oldest first.
	PendingProjectRequests(ctx context.Context, ownerID string) ([]*ProjectRequest, error)
	// Threads lists a project's threads that are not closed, most recently
	// active first.
	Threads(ctx context.Context, projectID string) ([]*Conversation, error)
	// ThreadByKey finds a project's thread, not closed, with this key.
	ThreadByKey(ctx context.Context, projectID, key string) (*Conversation, error)
	Item(ctx context.Context, id string) (*Item, error)
	// Items lists a project's items, oldest first.
	Items(ctx context.Context, projectID string) ([]*Item, error)
	// ItemChanges lists an item's changes, oldest first.
	ItemChanges(ctx context.Context, itemID string) ([]ItemChange, error)
	Image(ctx context.Context, id string) (*Image, error)
	// Images lists the project's images, newest first.
	Images(ctx context.Context, projectID string) ([]*Image, error)
	// ImageBySHA finds the project's image with these bytes.
	ImageBySHA(ctx context.Context, projectID, sha256 string) (*Image, error)
	// ImageData returns the bytes stored under a SHA-256.
	ImageData(ctx context.Context, sha256 string) ([]byte, error)

	// EventsAfter returns up to limit of the recipient's events after
	// position after, in order, each message.new with its Message. heldTx
	// is the newest transaction among the recipient's committed events
	// past those (within limit), held back until the transactions before
	// them end (PostgreSQL, Pos); 0 if none.
	EventsAfter(ctx context.Context, recipientID string, after Pos, limit int) (events []*Event, heldTx int64, err error)
	// RecentEvents returns up to limit of the recipient's events of these
	// types (at least one) at or before position upTo, newest first, each
	// message event with its Message.
	RecentEvents(ctx context.Context, recipientID string, upTo Pos, types []string, limit int) ([]*Event, error)
	// PausedConversations lists the open, paused conversations in which
	// the person or one of their agents takes part, latest pause first.
	PausedConversations(ctx context.Context, ownerID string) ([]*Conversation, error)
	// LatestEvent is the position of the last event readable so far: no
	// event committed later can stand at or before it. heldTx is the
	// newest transaction of the events committed but held back past it
	// (0 if none; PostgreSQL, Pos): once latest.Tx reaches heldTx, every
	// event committed before this call is at or before latest.
	LatestEvent(ctx context.Context) (latest Pos, heldTx int64, err error)
	// EventRecipients lists the distinct recipients of the events with
	// positions after after, up to upTo.
	EventRecipients(ctx context.Context, after, upTo Pos) ([]string, error)

	// Webhooks lists the agent's webhook endpoints, oldest first, each
	// with its agent's handle and its calls still to make (§18).
	Webhooks(ctx context.Context, agentID string) ([]*Webhook, error)
	// WebhookAgents lists the agents with at least one enabled endpoint.
	WebhookAgents(ctx context.Context) ([]string, error)
	Webhook(ctx context.Context, id string) (*Webhook, error)
	// WebhookAttempts lists an endpoint's latest attempts, newest first,
	// at most limit.
	WebhookAttempts(ctx context.Context, webhookID string, limit int) ([]WebhookAttempt, error)
	// DueWebhooks lists the enabled endpoints with calls due at now, the
	// one whose call has waited longest first.
	DueWebhooks(ctx context.Context, now time.Time) ([]string, error)
}

// Tx is a write transaction: every query of Reader plus the mutations.
type Tx interface {
	Reader
	PresenceWriter
	PermissionWriter
	SetMeta(ctx context.Context, key, value string) error

	// LockUsers holds off other new people until the transaction ends, so
	// only the first is the admin (a no-op where one writer commits
	// everything).
	LockUsers(ctx context.Context) error
	InsertUser(ctx context.Context, u *User) error
	// SetUserName stores a person's display name.
	SetUserName(ctx context.Context, userID, name string) error
	SetPasswordHash(ctx context.Context, userID, hash string) error
	InsertLogin(ctx context.Context, l *Login) error
	// TouchLogin records a sign-in's last use.
	TouchLogin(ctx context.Context, id string, at time.Time) error
	DeleteLogin(ctx context.Context, id string) error
	// DeleteLogins ends every sign-in of the person (a new password).
	DeleteLogins(ctx context.Context, userID string) error
	InsertInvite(ctx context.Context, inv *Invite) error
	// UseInvite marks an unused invite used; ErrNoRows when it was used.
	UseInvite(ctx context.Context, id, userID string, at time.Time) error
	InsertAgent(ctx context.Context, a *Agent) error
	// SetAgentArchived archives (at non-zero) or restores (at zero) an agent.
	SetAgentArchived(ctx context.Context, agentID string, at time.Time) error
	// UpsertInstance records a session name's note (kept when note is "") and
	// last-seen time.
	UpsertInstance(ctx context.Context, agentID, name, note string, at time.Time) error
	DeleteInstance(ctx context.Context, agentID, name string) error

	InsertToken(ctx context.Context, t *Token) error
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// RevokeAgentTokens revokes every token of the agent not revoked yet,
	// and the OAuth grants that let clients act as it.
	RevokeAgentTokens(ctx context.Context, agentID string, at time.Time) error
	TouchToken(ctx context.Context, id string, at time.Time) error
	// UseToken revokes a token not revoked yet, keeping successor with it
	// (nil: nothing); ErrNoRows when it was revoked.
	UseToken(ctx context.Context, id string, at time.Time, successor []byte) error
	// ForgetSuccessors drops what the grant's tokens used before
	// usedBefore keep of their successors.
	ForgetSuccessors(ctx context.Context, grantID string, usedBefore time.Time) error
	// PutOAuthClient stores a client, or replaces what is known of it.
	PutOAuthClient(ctx context.Context, c *OAuthClient) error
	InsertOAuthGrant(ctx context.Context, g *OAuthGrant) error
	// RevokeOAuthGrant revokes a grant and every token issued under it,
	// and forgets their successors.
	RevokeOAuthGrant(ctx context.Context, id string, at time.Time) error
	InsertOAuthCode(ctx context.Context, c *OAuthCode) error
	// UseOAuthCode marks an unused code used; ErrNoRows when it was.
	UseOAuthCode(ctx context.Context, hash []byte, at time.Time) error

	// LockConversation holds the conversation until the transaction ends,
	// so transactions acting on one conversation take turns (a no-op where
	// one writer commits everything).
	LockConversation(ctx context.Context, id string) error
	InsertConversation(ctx context.Context, c *Conversation) error
	AddParticipant(ctx context.Context, p *Participant) error
	// LeaveConversation ends the principal's part in a conversation.
	LeaveConversation(ctx context.Context, conversationID, principalID string, at time.Time) error
	SetConversationStatus(ctx context.Context, id, status string, at time.Time) error
	// NextSeq increments the conversation's last seq under its row lock and
	// returns the new value, so seq order is commit order (§13).
	NextSeq(ctx context.Context, conversationID string, at time.Time) (int64, error)
	InsertMessage(ctx context.Context, m *Message) error
	// InsertDeliveries creates a waiting delivery of m for each agent.
	InsertDeliveries(ctx context.Context, m *Message, agentIDs []string) error
	// MarkFetched records the first body read of the agent's deliveries.
	MarkFetched(ctx context.Context, agentID string, messageIDs []string, at time.Time) error
	// UnmarkFetched forgets the body reads of the agent's waiting
	// deliveries in the conversation from seq fromSeq on.
	UnmarkFetched(ctx context.Context, agentID, conversationID string, fromSeq int64) error
	// WithdrawDeliveries takes the agent's waiting deliveries in a
	// conversation out of its inbox (state withdrawn) and returns their
	// message ids, sorted.
	WithdrawDeliveries(ctx context.Context, agentID, conversationID string, at time.Time) ([]string, error)
	// SetDeliveryState stores a delivery's processing state (§5): its
	// state, attempts, error, and when its attempt started and when it was
	// acknowledged.
	SetDeliveryState(ctx context.Context, d *Delivery) error
	SetAgentMode(ctx context.Context, agentID, mode string) error
	// SetAgentPublic marks the agent public or not (§1).
	SetAgentPublic(ctx context.Context, agentID string, public bool) error
	// PutA2AExposure stores the agent's A2A setting, replacing any.
	PutA2AExposure(ctx context.Context, e *A2AExposure) error
	InsertA2ARequest(ctx context.Context, r *A2ARequest) error
	PutContact(ctx context.Context, c *Contact) error
	PutGrant(ctx context.Context, g *Grant) error
	InsertGrantRequest(ctx context.Context, r *GrantRequest) error
	DecideGrantRequest(ctx context.Context, id, status string, at time.Time) error
	// PutInboundAsk stores the agent's ask of the person (one per pair).
	PutInboundAsk(ctx context.Context, a *InboundAsk) error
	// SetInboundAskStatus records a decision and reports whether it changed
	// anything (false when the ask already had that status).
	SetInboundAskStatus(ctx context.Context, id, status string, at time.Time) (bool, error)
	// DeleteInboundAsk drops an inbound ask (none by that id: nothing to do).
	DeleteInboundAsk(ctx context.Context, id string) error
	// SetBrakeState records a conversation's turn count, last voice and
	// pause (zero pausedAt: not paused).
	SetBrakeState(ctx context.Context, c *Conversation) error
	// TouchPerson records that a person took part at: turns start again and
	// any pause is lifted.
	TouchPerson(ctx context.Context, conversationID string, at time.Time) error
	// DecideMessage stores a held message's decision: its status, seq, body,
	// summary, original body, authority and who decided when.
	DecideMessage(ctx context.Context, m *Message) error
	InsertQuestion(ctx context.Context, q *Question) error
	AnswerQuestion(ctx context.Context, id, answer string, at time.Time) error
	AckAnswer(ctx context.Context, id string, at time.Time) error
	// SetHold makes the agent's session the holder of a conversation.
	SetHold(ctx context.Context, agentID, conversationID, instance string, at time.Time) error
	// MoveRead sets a place to max(current, seq) when forward; otherwise to
	// min(current, seq), leaving a place that does not exist yet alone.
	MoveRead(ctx context.Context, conversationID, principalID, instance string, seq int64, forward bool, at time.Time) error
	// LockProject holds the project's row until the transaction ends, so
	// changes of who is in it and new threads take turns (a no-op where one
	// writer commits everything).
	LockProject(ctx context.Context, id string) error
	InsertProject(ctx context.Context, p *Project) error
	// UpdateProject stores a project's name, description, cap, archiving
	// and update time.
	UpdateProject(ctx context.Context, p *Project) error
	// PutProjectMember adds a person to a project (already there: nothing).
	PutProjectMember(ctx context.Context, m *ProjectMember) error
	DeleteProjectMember(ctx context.Context, projectID, userID string) error
	// PutProjectAgent brings an agent in, or changes its access and review.
	PutProjectAgent(ctx context.Context, pa *ProjectAgent) error
	DeleteProjectAgent(ctx context.Context, projectID, agentID string) error
	InsertProjectRequest(ctx context.Context, r *ProjectRequest) error
	// DecideProjectRequest stores a pending request's decision (status,
	// project, who and when); ErrNoRows when it is no longer pending.
	DecideProjectRequest(ctx context.Context, r *ProjectRequest) error
	InsertItem(ctx context.Context, it *Item) error
	// UpdateItem stores an item's title, note, url, status and update time.
	UpdateItem(ctx context.Context, it *Item) error
	InsertItemChange(ctx context.Context, c *ItemChange) error
	// InsertImage stores an image row and its bytes (kept once per SHA-256).
	InsertImage(ctx context.Context, img *Image, data []byte) error
	// InsertEvents appends events (ids assigned by the store, in order).
	InsertEvents(ctx context.Context, events []*Event) error
	// PruneEvents deletes events created before t (and any before the
	// newest of those), records the last position deleted under
	// MetaPrunedThrough, and returns it (zero when none).
	PruneEvents(ctx context.Context, before time.Time) (Pos, error)

	// InsertWebhook stores an endpoint with the secret it signs with.
	InsertWebhook(ctx context.Context, w *Webhook, secret string) error
	// DeleteWebhook deletes an endpoint with its calls and its log.
	DeleteWebhook(ctx context.Context, id string) error
	// SetWebhookDisabled disables an endpoint (at not zero), saying why,
	// and drops its calls; at zero enables it again.
	SetWebhookDisabled(ctx context.Context, id string, at time.Time, reason string) error
	// InsertWebhookCalls adds calls to the outbox.
	InsertWebhookCalls(ctx context.Context, calls []*WebhookCall) error
	// ClaimWebhookCalls takes up to limit calls of an enabled endpoint
	// that are due at now (oldest due first), in the order they were made,
	// with the endpoint's URL and secret and its agent, and makes them due
	// at until instead: no one else sends them meanwhile, and a call whose
	// sender stopped is due again then. Rows another transaction holds are
	// skipped, so two replicas never claim the same call.
	ClaimWebhookCalls(ctx context.Context, webhookID string, now, until time.Time, limit int) ([]*WebhookCall, error)
	// DeleteWebhookCall deletes a delivered call.
	DeleteWebhookCall(ctx context.Context, id string) error
	// RescheduleWebhookCall stores a call's attempts and when it is due.
	RescheduleWebhookCall(ctx context.Context, c *WebhookCall) error
	// InsertWebhookAttempt logs an attempt, keeping only the endpoint's
	// latest keep.
	InsertWebhookAttempt(ctx context.Context, a *WebhookAttempt, keep int) error
}
