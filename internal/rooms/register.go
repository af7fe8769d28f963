package rooms

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's agent made in one step, the rooms profile's register_agent
// (§1, §2, §10.5): an agent and its token, through the hub's own
// CreateAgent and MintToken.

// RegisteredToken names the token RegisterAgent mints.
const RegisteredToken = "registered"

// RegisterAgent is a person making an agent of their own in one step (§1,
// §2): its slug comes from name (lower-cased; spaces, underscores and
// dashes become one dash; other characters are dropped; cut to 40) and,
// when u already has an agent by that slug (archived ones too), takes the
// first free -2, -3 …; description is required (at most hub.MaxDescription).
// It then mints a static token with every scope, named RegisteredToken,
// and returns the agent and the token's secret, shown this once. A name
// with no letter or digit is invalid.
func (x *Rooms) RegisterAgent(ctx context.Context, u *hub.User, name, description string) (*hub.Agent, string, error) {
	name, err := hub.CheckText("name", strings.TrimSpace(name), 1, hub.MaxTitle)
	if err != nil {
		return nil, "", err
	}
	base := slugFrom(name)
	if base == "" {
		return nil, "", hub.Invalid("", "the name %q gives no {handle}: use letters or digits, like \"Release Planner\" (the agent becomes %s/release-planner)", hub.Echo(name), u.Handle)
	}
	description, err = hub.CheckText("description", strings.TrimSpace(description), 1, hub.MaxDescription)
	if err != nil {
		return nil, "", err
	}
	for n := 1; n <= maxNumbered; n++ {
		slug := numbered(base, n)
		_, err := x.store.AgentByHandle(ctx, u.Handle, slug)
		if err == nil {
			continue
		}
		if !errors.Is(err, hub.ErrNoRows) {
			return nil, "", hub.AsError(err)
		}
		a, err := x.hub.CreateAgent(ctx, hub.AgentSpec{Handle: u.Handle + "/" + slug, Name: name, Description: description})
		if e := hub.AsError(err); err != nil && e.Kind == hub.KindConflict {
			continue // made meanwhile by another call
		}
		if err != nil {
			return nil, "", err
		}
		_, secret, err := x.hub.MintToken(ctx, hub.TokenSpec{Owner: u.Handle, Agent: slug, Name: RegisteredToken})
		if err != nil {
			return nil, "", err
		}
		return a, secret, nil
	}
	return nil, "", &hub.Error{Kind: hub.KindConflict, Msg: fmt.Sprintf("%s already has agents %s to %s; choose another name", u.Handle, base, numbered(base, maxNumbered))}
}

// maxSlug is the longest slug (§1); maxNumbered the highest number
// RegisterAgent tries after a slug before giving up.
const (
	maxSlug     = 40
	maxNumbered = 100
)

// slugFrom makes a slug of a name: lower-cased, white space, underscores
// and dashes as one dash, any other character outside [a-z0-9] dropped,
// no dash at either end, at most maxSlug long; "" when nothing is left.
func slugFrom(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		case r == '-' || r == '_' || unicode.IsSpace(r):
			dash = true
		}
	}
	return numbered(b.String(), 1)
}

// numbered is the n-th slug tried for base: base itself, then base-2,
// base-3 …, with base cut so that the whole stays within maxSlug.
func numbered(base string, n int) string {
	suffix := ""
	if n > 1 {
		suffix = "-" + strconv.Itoa(n)
	}
	if len(base) > maxSlug-len(suffix) {
		base = strings.TrimRight(base[:maxSlug-len(suffix)], "-")
	}
	return base + suffix
}
