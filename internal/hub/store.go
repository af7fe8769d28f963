package hub

import (
	"context"
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

// Reader holds every query the hub makes: each aggregate's reads,
// declared in the aggregate's own file (messages.go declares MessageReads).
// Times are UTC; a zero time.Time means "never" or "not set".
type Reader interface {
	MetaReads
	UserReads
	AccountReads
	AgentReads
	SessionReads
	A2AReads
	TokenReads
	OAuthReads
	ConversationReads
	BrakeReads
	MessageReads
	DeliveryReads
	RoomReads
	SearchReads
	QuestionReads
	ContactReads
	GrantReads
	InboundAskReads
	ProjectReads
	ItemReads
	ImageReads
	EventReads
	WebhookReads
	RemoteReads
	PresenceReads
	PermissionReads
	NotifyReads
}

// Tx is a write transaction: every query of Reader plus each aggregate's
// writes, declared in the aggregate's own file.
type Tx interface {
	Reader
	MetaWrites
	UserWrites
	AccountWrites
	AgentWrites
	SessionWrites
	A2AWrites
	TokenWrites
	OAuthWrites
	ConversationWrites
	BrakeWrites
	MessageWrites
	DeliveryWrites
	QuestionWrites
	ContactWrites
	GrantWrites
	InboundAskWrites
	ProjectWrites
	ItemWrites
	ImageWrites
	EventWrites
	WebhookWrites
	RemoteWrites
	PresenceWrites
	PermissionWrites
	NotifyWrites
}
