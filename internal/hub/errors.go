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
// what to do instead; Err is the internal cause, logged only. Code, when set,
// is a more specific wire code than the kind's (e.g. "cursor_expired",
// "summary_required"); Details are extra fields a face adds next to code and
// message (e.g. latest_cursor, retry_after_s). Hint, when set, is what a
// person can do to mend it, for a face that says it its own way.
type Error struct {
	Kind    Kind
	Code    string
	Msg     string
	Err     error
	Details map[string]any
	Hint    *Hint
}

// A Hint is what a person can do to mend an error. The hub names the
// action; Msg ends with the command line's way to do it, as the command
// line, the dashboard and agents are told, and a face with a way of its
// own (the REST face: its route) says Base, Lead and its way instead.
type Hint struct {
	Base   string // the message before the hint
	Lead   string // what to do, in words any face can say: "list them"
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
	ActionCreatePerson    = "create_person"     // a person with handle
)

// Actions lists every action, for the tests of each face's way to say them.
var Actions = []string{ActionApproveContact, ActionListApprovals, ActionListTokens, ActionMintPersonToken, ActionCreatePerson}

// Command is the command line's way to do a.
func (a Action) Command() string {
	switch a.Name {
	case ActionApproveContact:
		return "palaver contact approve " + a.Args["handle"] + " --user " + a.Args["user"]
	case ActionListApprovals:
		return "palaver approvals list --user " + a.Args["user"]
	case ActionListTokens:
		return "palaver token list --user OWNER"
	case ActionMintPersonToken:
		return "palaver token mint --user HANDLE --owner"
	case ActionCreatePerson:
		return "palaver user create " + a.Args["handle"]
	}
	return "palaver --help"
}

// hinted is an Error of kind k whose message, format's words, ends with
// lead and the command line's way to do a.
func hinted(k Kind, lead string, a Action, format string, args ...any) *Error {
	base := fmt.Sprintf(format, args...)
	return &Error{Kind: k, Msg: base + "; " + lead + " with: " + a.Command(), Hint: &Hint{Base: base, Lead: lead, Action: a}}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.WireCode(), e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.WireCode(), e.Msg)
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
