package hub

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Input hygiene (§4). Every limit counts Unicode code points. Text arrives as
// UTF-8; each invalid byte (and each unpaired surrogate, which JSON decoding
// already turns into one) becomes U+FFFD, and so does NUL, which no
// database keeps as text the same way — one rule, the same in every text
// field (a body, a summary, a title, a note, a name, an id a client
// chose), applied here by checkText before any rule of the field's own.
// Nothing is ever truncated: an over-limit value is refused with the limit
// in the message.

// cleanText replaces each invalid UTF-8 byte, and each NUL, with U+FFFD.
func cleanText(s string) string {
	if utf8.ValidString(s) {
		return strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == 0 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// blank reports whether s shows nothing: every character in it is white
// space, a control or format character (NUL, zero-width space, word joiner,
// byte order mark …) or another one Unicode says to ignore in display
// (variation selectors, Hangul fillers). One rule for every text that must
// say something, looked at before NUL becomes U+FFFD.
func blank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) && !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) && r != '\u2800' {
			return false
		}
	}
	return true
}

// CheckText is checkText for the leaves carved out of the hub
// (internal/oauth's client names): s cleaned, or the refusal.
func CheckText(name, s string, min, max int) (string, error) { return checkText(name, s, min, max) }

// checkText cleans s and checks it holds between min and max code points;
// a required value (min 1 or more) must not be blank. name is the
// argument's name as the default profile knows it, a placeholder each face
// says in its words.
func checkText(name, s string, min, max int) (string, error) {
	if min >= 1 && s != "" && blank(s) {
		return "", invalid("", "{%s} is blank: white space and invisible characters alone say nothing; write what you mean", name)
	}
	s = cleanText(s)
	n := utf8.RuneCountInString(s)
	switch {
	case n < min && min == 1:
		return "", invalid("", "{%s} is required and must not be empty", name)
	case n < min:
		return "", invalid("", "{%s} must be at least %d characters (got %d)", name, min, n)
	case n > max:
		return "", invalid("too_long", "{%s} is %d characters; the limit is %d characters (Unicode code points). Shorten it — nothing is ever truncated", name, n, max)
	}
	return s, nil
}

// checkLine checks an optional value that names or sums up something (a
// summary, a client_msg_id): a blank one is none; otherwise it is cleaned
// and checked as every text is (checkText).
func checkLine(name, s string, max int) (string, error) {
	if blank(s) {
		return "", nil
	}
	return checkText(name, s, 0, max)
}

// echo is a value someone gave, as an error message quotes it: cleaned,
// and cut to a line, so a message never carries a huge input back.
func echo(s string) string { return escapeBraces(Preview(cleanText(s), 60)) }

// Echo is echo for the faces' own refusals: a value someone gave, made
// valid and cut to a line.
func Echo(s string) string { return echo(s) }

// Preview returns s cut to at most n code points, with "…" appended when it
// was cut: the cut falls between grapheme clusters, what a reader sees as
// one character (an emoji with its modifiers or joined family, a flag, a
// letter with its accents), never inside one. Every preview and quote of a
// value cuts here; a search snippet cuts on the same boundaries.
func Preview(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count, state := 0, 0, -1
	for rest := s; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if count += utf8.RuneCountInString(c); count > n {
			break
		}
		i += len(c)
	}
	return strings.TrimRight(s[:i], " \n\t") + "…"
}

// FormatTime is how every face shows a time: RFC 3339 in UTC with
// milliseconds; "" for the zero time ("never", "not yet").
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// Limits of §4, in code points.
const (
	MaxBody        = 10000
	MaxSummary     = 200
	SummaryNeeded  = 200 // an agent body longer than this needs a summary
	MaxTitle       = 200
	MaxGoal        = 2000
	MaxMetadata    = 16 << 10 // bytes of JSON
	MaxClientMsgID = 100
	MaxHandles     = 20 // handles in one open_conversation
	MaxMembers     = 50 // participants given to create_thread, mentions per message
	MaxErrorText   = 2000
	MaxDescription = 1000
	MaxNote        = 200
)

// span says a duration as people do: "2 hours", "1 hour", "30 minutes".
func span(d time.Duration) string {
	unit, n := "minute", int(d/time.Minute)
	if d >= time.Hour && d%time.Hour == 0 {
		unit, n = "hour", int(d/time.Hour)
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// ParseTime reads an argument given as an ISO 8601 time ("" is none, the
// zero time): RFC 3339 with or without fractions, or a date alone.
func ParseTime(name, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid("", "{%s} must be an ISO 8601 time, like 2026-12-01T09:30:00Z (got %q)", name, echo(s))
}
