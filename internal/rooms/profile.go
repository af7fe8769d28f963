package rooms

import (
	"context"
	"strings"
	"unicode"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's profile as the rooms profile changes it (§1, §10.5).

// UpdateUserName sets u's display name (§1) and returns u as it is now:
// 1–hub.MaxUserName code points on one line (no line breaks, tabs or other
// control characters). It is a label only: people are found, named and
// trusted by handle, never by name.
func (x *Rooms) UpdateUserName(ctx context.Context, u *hub.User, name string) (*hub.User, error) {
	// Cleaned first, as every text is (§4): a NUL is U+FFFD by now.
	name, err := hub.CheckText("name", strings.TrimSpace(name), 1, hub.MaxUserName)
	if err != nil {
		return nil, err
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) }) >= 0 {
		return nil, hub.Invalid("", "name is one line: leave out line breaks, tabs and other control characters")
	}
	if err := x.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) { return nil, tx.SetUserName(ctx, u.ID, name) }); err != nil {
		return nil, err
	}
	out := *u
	out.Name = name
	return &out, nil
}
