package hub

import "time"

// The defaults and bounds of the tools' numeric arguments (§10.3), declared
// once: the tool schemas, the command line and the docs' tests read them.

// Page is a listing's limit argument: the default when none is given and
// the most one call returns.
type Page struct{ Default, Max int }

// The listings' pages.
var (
	InboxPage         = Page{Default: 20, Max: 50}   // check_inbox
	ConversationsPage = Page{Default: 50, Max: 100}  // list_conversations
	MessagesPage      = Page{Default: 100, Max: 100} // read_messages
	RecentPage        = Page{Default: 20, Max: 50}   // a thread's latest messages (read_thread)
)

// check applies the default to 0 and refuses values outside 1..Max.
func (p Page) check(limit int) (int, error) {
	if limit == 0 {
		return p.Default, nil
	}
	if limit < 1 || limit > p.Max {
		return 0, invalid("", "limit must be between 1 and %d (got %d)", p.Max, limit)
	}
	return limit, nil
}

// How long wait_for_messages parks (§6).
const (
	DefaultWait = 25 * time.Second
	MaxWait     = 55 * time.Second
)

// WaitTimeout turns a wait's timeout_s into a duration: DefaultWait when it
// is not given, and a refusal outside 0..MaxWait, checked before converting
// so no count of seconds can wrap around.
func WaitTimeout(seconds *int64) (time.Duration, error) {
	if seconds == nil {
		return DefaultWait, nil
	}
	if err := checkWait(*seconds); err != nil {
		return 0, err
	}
	return time.Duration(*seconds) * time.Second, nil
}

// checkWait refuses a wait of other than 0 to MaxWait seconds.
func checkWait(seconds int64) error {
	if seconds < 0 || seconds > int64(MaxWait/time.Second) {
		return invalid("", "timeout_s must be between 0 and %d (got %d)", int(MaxWait/time.Second), seconds)
	}
	return nil
}

// DefaultAllowHuman is request_grant's allow_human when it is not given.
const DefaultAllowHuman = true
