package tasks

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode"

	"github.com/palaverhq/palaver/internal/hub"
)

// Exposure (§18): an owner exposes an agent to A2A clients, which then
// find it by its Agent Card. It is an agent setting, off by default; an
// unexposed agent's card and endpoint do not exist.

// Limits of an agent's listed skills (§18), in code points.
const (
	MaxSkills           = 20
	MaxSkillName        = 80
	MaxSkillDescription = 500
)

// Setting is what an owner sets for an agent's A2A exposure. Skills nil
// keeps the skills listed before; an empty, non-nil list clears them.
type Setting struct {
	Exposed bool
	Skills  []hub.Skill
}

// ExposedAgent is an agent as its Agent Card shows it: the agent and its
// A2A setting.
type ExposedAgent struct {
	Agent    *hub.Agent
	Exposure *hub.A2AExposure
}

// ParseSkills reads skills as an owner writes them on the dashboard: one a
// line, "Name: what it does" (the description may be left out), blank lines
// skipped. It returns a non-nil list (empty when text says none), for
// SetExposure to check.
func ParseSkills(text string) []hub.Skill {
	out := []hub.Skill{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, desc, _ := strings.Cut(line, ":")
		out = append(out, hub.Skill{Name: strings.TrimSpace(name), Description: strings.TrimSpace(desc)})
	}
	return out
}

// SkillLines writes skills as ParseSkills reads them, one a line.
func SkillLines(skills []hub.Skill) string {
	lines := make([]string, 0, len(skills))
	for _, sk := range skills {
		line := sk.Name
		if sk.Description != "" {
			line += ": " + sk.Description
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// CardPath is where the agent's Agent Card is, under the server's URL
// (§18); its JSON-RPC endpoint is the same path without the last two parts.
func CardPath(a *hub.Agent) string {
	return "/a2a/" + url.PathEscape(a.OwnerHandle) + "/" + url.PathEscape(a.Slug) + "/.well-known/agent-card.json"
}

// skillID is a skill's id on the card: its name lower-cased, each run of
// characters other than letters and digits one "-".
func skillID(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// checkSkills cleans an owner's skills and gives each its id: a name of
// 1–MaxSkillName code points with a letter or digit in it, a description of
// at most MaxSkillDescription, at most MaxSkills, no two of one id.
func checkSkills(skills []hub.Skill) ([]hub.Skill, error) {
	if len(skills) > MaxSkills {
		return nil, hub.Invalid("", "%d skills are listed; the limit is %d — list what callers most need", len(skills), MaxSkills)
	}
	out := make([]hub.Skill, 0, len(skills))
	seen := map[string]bool{}
	for i, s := range skills {
		name, err := hub.CheckText("skill name", strings.TrimSpace(s.Name), 1, MaxSkillName)
		if err != nil {
			return nil, err
		}
		desc, err := hub.CheckText("skill description", strings.TrimSpace(s.Description), 0, MaxSkillDescription)
		if err != nil {
			return nil, err
		}
		id := skillID(name)
		switch {
		case id == "":
			return nil, hub.Invalid("", "skill %d, %q, has no letter or digit in its name; name it in words, like \"Triage bug reports\"", i+1, hub.Echo(name))
		case seen[id]:
			return nil, hub.Invalid("", "two skills are named %q; give each skill its own name", hub.Echo(name))
		}
		seen[id] = true
		out = append(out, hub.Skill{ID: id, Name: name, Description: desc})
	}
	return out, nil
}

// SetExposure exposes the person's own agent over A2A or not, with the
// skills its card lists (§18). slug is as hub.OwnAgent takes it; another's
// agent is not_found; bad skills are invalid and change nothing.
// Exposing is no consent to be reached: who may call it is still §3's
// rule (a public agent is within everyone's reach).
func (x *Tasks) SetExposure(ctx context.Context, u *hub.User, slug string, s Setting) (*ExposedAgent, error) {
	a, err := x.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	var skills []hub.Skill
	if s.Skills != nil {
		if skills, err = checkSkills(s.Skills); err != nil {
			return nil, err
		}
	}
	var e *hub.A2AExposure
	err = x.store.Update(ctx, func(tx hub.Tx) error {
		old, err := tx.A2AExposure(ctx, a.ID)
		switch {
		case errors.Is(err, hub.ErrNoRows):
			old = &hub.A2AExposure{AgentID: a.ID, Skills: []hub.Skill{}}
		case err != nil:
			return err
		}
		e = &hub.A2AExposure{AgentID: a.ID, Exposed: s.Exposed, Skills: old.Skills, UpdatedAt: x.hub.Now()}
		if skills != nil {
			e.Skills = skills
		}
		return tx.PutA2AExposure(ctx, e)
	})
	if err != nil {
		return nil, hub.AsError(err)
	}
	return &ExposedAgent{Agent: a, Exposure: e}, nil
}

// Exposure is the person's own agent's A2A setting (not exposed, no
// skills when never set).
func (x *Tasks) Exposure(ctx context.Context, u *hub.User, slug string) (*ExposedAgent, error) {
	a, err := x.hub.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	e, err := x.hub.A2AExposure(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	return &ExposedAgent{Agent: a, Exposure: e}, nil
}

// errNoCard is the answer for an agent that is not exposed, archived or
// none at all: the same, so a card tells nothing of agents not shown (§15).
func errNoCard(owner, slug string) error {
	return hub.NotFound("no agent %s/%s takes A2A calls here; its owner exposes it on the agent's page", hub.Echo(owner), hub.Echo(slug))
}

// ExposedAgent is the agent owner/slug if its owner exposes it over A2A
// and it is not archived; else not_found, whoever asks (§18).
func (x *Tasks) ExposedAgent(ctx context.Context, owner, slug string) (*ExposedAgent, error) {
	a, err := x.store.AgentByHandle(ctx, owner, slug)
	if errors.Is(err, hub.ErrNoRows) {
		return nil, errNoCard(owner, slug)
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	e, err := x.hub.A2AExposure(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if !e.Exposed || a.Archived() {
		return nil, errNoCard(owner, slug)
	}
	return &ExposedAgent{Agent: a, Exposure: e}, nil
}

// ExposedAgents is the directory of the owner's agents exposed over A2A, by
// slug. An owner with none, or no such owner, is not_found alike.
func (x *Tasks) ExposedAgents(ctx context.Context, owner string) ([]*ExposedAgent, error) {
	missing := hub.NotFound("%s exposes no agent over A2A here", hub.Echo(owner))
	u, err := x.store.UserByHandle(ctx, owner)
	if errors.Is(err, hub.ErrNoRows) {
		return nil, missing
	}
	if err != nil {
		return nil, hub.AsError(err)
	}
	agents, err := x.store.ExposedAgents(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	if len(agents) == 0 {
		return nil, missing
	}
	out := make([]*ExposedAgent, 0, len(agents))
	for _, a := range agents {
		e, err := x.hub.A2AExposure(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, &ExposedAgent{Agent: a, Exposure: e})
	}
	return out, nil
}
