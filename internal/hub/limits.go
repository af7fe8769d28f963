package hub

import (
	"fmt"
	"strconv"
	"time"
)

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
	SearchPage        = Page{Default: 20, Max: 50}   // search_messages (§18)
)

// Range is the range of a page's limit as given: 1 to Max. (Left out,
// the limit is Default.)
func (p Page) Range() Range { return Range{1, int64(p.Max)} }

// check applies the default to 0, the hub's "not given", and refuses values
// outside 1..Max.
func (p Page) check(limit int) (int, error) {
	if limit == 0 {
		return p.Default, nil
	}
	if err := p.Range().Check("limit", int64(limit)); err != nil {
		return 0, err
	}
	return limit, nil
}

// Range bounds an integer argument, both ends included. A face checks the
// number as written against it before converting it (§4 input hygiene), so
// no value can wrap around or be taken for "not given"; the hub checks
// again what it is handed.
type Range struct{ Min, Max int64 }

// MaxSeq is the largest seq an argument may name: 2^53-1, the largest
// integer every JSON client keeps exactly. (A conversation's seqs start at 1.)
const MaxSeq = 1<<53 - 1

// The ranges of the seq arguments and of a wait.
var (
	SeqRange      = Range{1, MaxSeq}                       // reply_to_seq, mark_unread's seq
	AfterSeqRange = Range{0, MaxSeq}                       // read_messages' after_seq
	WaitRange     = Range{0, int64(MaxWait / time.Second)} // wait_for_messages' timeout_s
)

// Check refuses n outside r, naming the argument and the range.
func (r Range) Check(name string, n int64) error {
	if n < r.Min || n > r.Max {
		return r.Refuse(name, strconv.FormatInt(n, 10))
	}
	return nil
}

// Parse reads an integer written in decimal (a query parameter) and checks
// it against r, before converting, with the same refusal as Check.
func (r Range) Parse(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < r.Min || n > r.Max {
		got := strconv.Quote(s)
		if len(s) > 40 {
			got = fmt.Sprintf("%d characters", len(s))
		}
		return 0, r.Refuse(name, got)
	}
	return n, nil
}

// refuse is the one refusal of a value outside r; got is the value as the
// caller wrote it.
// Refuse is the refusal of a value of name outside r, got as written.
func (r Range) Refuse(name, got string) *Error {
	return invalid("", "%s must be an integer between %d and %d (got %s)", name, r.Min, r.Max, got)
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
func checkWait(seconds int64) error { return WaitRange.Check("timeout_s", seconds) }

// DefaultAllowHuman is request_grant's allow_human when it is not given.
const DefaultAllowHuman = true

// The rooms' pages: a page number and a page size, the first page 1.
var (
	RoomPage    = Page{Default: 20, Max: 100} // lists of rooms, participants, peers, contacts, work
	ContextPage = Page{Default: 50, Max: 100} // a room's context for one agent
	PageNumbers = Range{1, 1_000_000}
)

// Paging is a page of a listing by number: Number 1 is the first, Size
// how many are on a page (0: the listing's default).
type Paging struct{ Number, Size int }

// window checks a Paging against the listing's page and returns the rows
// to skip and the page's size.
func (p Page) window(pg Paging) (offset, size int, err error) {
	if pg.Number == 0 {
		pg.Number = 1
	}
	if err := PageNumbers.Check("page", int64(pg.Number)); err != nil {
		return 0, 0, err
	}
	if pg.Size == 0 {
		pg.Size = p.Default
	}
	if err := p.Range().Check("page_size", int64(pg.Size)); err != nil {
		return 0, 0, err
	}
	return (pg.Number - 1) * pg.Size, pg.Size, nil
}

// PageOf cuts a page out of a whole listing: its rows and whether more
// follow.
func PageOf[T any](rows []T, pg Paging, page Page) ([]T, bool, error) {
	offset, size, err := page.window(pg)
	if err != nil {
		return nil, false, err
	}
	end := min(offset+size, len(rows))
	return rows[min(offset, end):end], end < len(rows), nil
}
