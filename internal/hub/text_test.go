package hub_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestPreviewCutsOnGraphemes: a preview is at most n code points and
// never ends inside what a reader sees as one character — a joined emoji
// family, a flag, a skin tone, a letter with its accents (§4).
func TestPreviewCutsOnGraphemes(t *testing.T) {
	family, flag, thumb := "👩\u200d👩\u200d👧\u200d👦", "🇩🇪", "👍🏽" // 7, 2 and 2 code points
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abc" + family, 5, "abc…"},
		{"abc" + family, 10, "abc" + family},
		{"ab" + family + "cd", 9, "ab" + family + "…"},
		{flag + flag + flag, 3, flag + "…"},
		{flag + flag + flag, 4, flag + flag + "…"},
		{"x" + thumb + "y", 2, "x…"},
		{"cafe\u0301 au lait", 4, "caf…"},
		{"cafe\u0301 au lait", 5, "cafe\u0301…"},
		{family, 3, "…"}, // nothing fits whole: the cut shows none of it
		{"one two  three", 9, "one two…"},
	} {
		got := hub.Preview(c.s, c.n)
		if got != c.want {
			t.Errorf("Preview(%q, %d) = %q; want %q", c.s, c.n, got, c.want)
		}
	}
	// A summary line of a long body is cut the same.
	m := &hub.Message{Body: strings.Repeat("a", hub.MaxSummary-1) + flag + "tail"}
	if got, want := m.SummaryLine(), strings.Repeat("a", hub.MaxSummary-1)+"…"; got != want {
		t.Errorf("SummaryLine cuts a flag: %q; want %q", got, want)
	}
}
