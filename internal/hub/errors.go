package hub

import (
	"errors"
	"fmt"
)

// Kind classifies an Error so that every face can translate it in exactly one
// place (mcpserver.toolError, api.writeError, …). See CONVENTIONS.md "Errors".
type Kind int

// The error kinds. KindInternal is the zero value: anything not classified is
// an internal failure whose cause is logged and never shown.
const (
	KindInternal Kind = iota
	KindNotFound
	KindInvalid
	KindConflict
	KindForbidden
	KindUnauthenticated
	KindRateLimited
)

// Kinds lists every kind, for the tests that check each face's table.
var Kinds = []Kind{KindInternal, KindNotFound, KindInvalid, KindConflict, KindForbidden, KindUnauthenticated, KindRateLimited}

// String is the kind's wire code, used as error.code when an Error has no
// more specific Code.
func (k Kind) String() string {
	switch k {
	case KindNotFound:
		return "not_found"
	case KindInvalid:
		return "invalid_argument"
	case KindConflict:
		return "conflict"
	case KindForbidden:
		return "forbidden"
	case KindUnauthenticated:
		return "unauthenticated"
	case KindRateLimited:
		return "rate_limited"
	default:
		return "internal"
	}
}

// Error is the hub's one error type. Msg is safe to show the caller and says
// what to do instead, its names as placeholders each face says in its words
// (Text, words.go); Err is the internal cause, logged only. Code, when set,
// is a more specific wire code than the kind's (e.g. "cursor_expired",
// "summary_required"); Details are extra fields a face adds next to code and
// message (e.g. latest_cursor, retry_after_s). Hint, when set, is what a
// person can do to mend it, which each face says its own way.
type Error struct {
	Kind    Kind
	Code    string
	Msg     string
	Err     error
	Details map[string]any
	Hint    *Hint
}

// A Hint is what a person can do to mend an error: what to do, in words
// any face can say ("list them"), and the action, which each face names
// its own way (a page, a route, a command).
type Hint struct {
	Lead   string
	Action Action
}

// An Action is one thing a person can do, with what it needs.
type Action struct {
	Name string            // one of the Action… names
	Args map[string]string // what the action needs, by name
}

// The actions that hints name.
const (
	ActionApproveContact  = "approve_contact"   // user answers the contact request of handle
	ActionListApprovals   = "list_approvals"    // user's approvals
	ActionListTokens      = "list_tokens"       // every token
	ActionMintPersonToken = "mint_person_token" // a person's API token
	ActionMintAgentToken  = "mint_agent_token"  // an agent's token
	ActionCreatePerson    = "create_person"     // a person with handle
)

// Actions lists every action, for the tests of each face's way to say them.
var Actions = []string{ActionApproveContact, ActionListApprovals, ActionListTokens, ActionMintPersonToken, ActionMintAgentToken, ActionCreatePerson}

// hinted is an Error of kind k whose message is format's words, with
// what to do (lead) and the action each face says its way.
func hinted(k Kind, lead string, a Action, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Hint: &Hint{Lead: lead, Action: a}}
}

// Text is the error's message as a face says it: in w's words, and, when
// it has a hint and way names the action, its lead and that way.
func (e *Error) Text(w Words, way func(Action) string) string {
	msg := w.Say(e.Msg)
	if e.Hint != nil && way != nil {
		if how := way(e.Hint.Action); how != "" {
			msg += "; " + e.Hint.Lead + " " + how
		}
	}
	return msg
}

func (e *Error) Error() string {
	msg := Words(nil).Say(e.Msg)
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.WireCode(), msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.WireCode(), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// WireCode is Code when set, otherwise the kind's code.
func (e *Error) WireCode() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Kind.String()
}

// Errorf makes an Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Sentinel errors returned by Store implementations; the hub turns them into
// Errors with a message fit for the caller.
var (
	// ErrNoRows: the row asked for does not exist.
	ErrNoRows = errors.New("no such row")
	// ErrDuplicate: a unique constraint refused the write.
	ErrDuplicate = errors.New("duplicate")
)

// AsError returns err as an *Error, or a KindInternal Error wrapping it.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Msg: "internal error", Err: err}
}

func invalid(code, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Msg: fmt.Sprintf(format, args...)}
}
