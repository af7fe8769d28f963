package hub

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode"
)

// A2A (§18): an owner exposes an agent to A2A clients, which then find it
// by its Agent Card and hand it work under the same consent, brakes, review
// and provenance as any send_message. Exposure is an agent setting, off
// by default; an unexposed agent's card and endpoint do not exist.

// Limits of an agent's listed skills (§18), in code points.
const (
	MaxSkills           = 20
	MaxSkillName        = 80
	MaxSkillDescription = 500
)

// A2ASetting is what an owner sets for an agent's A2A exposure. Skills nil
// keeps the skills listed before; an empty, non-nil list clears them.
type A2ASetting struct {
	Exposed bool
	Skills  []Skill
}

// ExposedAgent is an agent as its Agent Card shows it: the agent and its
// A2A setting.
type ExposedAgent struct {
	Agent    *Agent
	Exposure *A2AExposure
}

// ParseSkills reads skills as an owner writes them on the dashboard: one a
// line, "Name: what it does" (the description may be left out), blank lines
// skipped. It returns a non-nil list (empty when text says none), for
// SetAgentA2A to check.
func ParseSkills(text string) []Skill {
	out := []Skill{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, desc, _ := strings.Cut(line, ":")
		out = append(out, Skill{Name: strings.TrimSpace(name), Description: strings.TrimSpace(desc)})
	}
	return out
}

// SkillLines writes skills as ParseSkills reads them, one a line.
func SkillLines(skills []Skill) string {
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

// A2AResourcePath is the path, under the server's URL, of the one OAuth
// resource (RFC 8707) every agent's A2A endpoint is part of (§10.6, §18):
// an OAuth token is used at an A2A endpoint only when it was issued for
// it (AuthenticateFor).
const A2AResourcePath = "/a2a/"

// A2ACardPath is where the agent's Agent Card is, under the server's URL
// (§18); its JSON-RPC endpoint is the same path without the last two parts.
func A2ACardPath(a *Agent) string {
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
func checkSkills(skills []Skill) ([]Skill, error) {
	if len(skills) > MaxSkills {
		return nil, invalid("", "%d skills are listed; the limit is %d — list what callers most need", len(skills), MaxSkills)
	}
	out := make([]Skill, 0, len(skills))
	seen := map[string]bool{}
	for i, s := range skills {
		name, err := checkText("skill name", strings.TrimSpace(s.Name), 1, MaxSkillName)
		if err != nil {
			return nil, err
		}
		desc, err := checkText("skill description", strings.TrimSpace(s.Description), 0, MaxSkillDescription)
		if err != nil {
			return nil, err
		}
		id := skillID(name)
		switch {
		case id == "":
			return nil, invalid("", "skill %d, %q, has no letter or digit in its name; name it in words, like \"Triage bug reports\"", i+1, echo(name))
		case seen[id]:
			return nil, invalid("", "two skills are named %q; give each skill its own name", echo(name))
		}
		seen[id] = true
		out = append(out, Skill{ID: id, Name: name, Description: desc})
	}
	return out, nil
}

// SetAgentA2A exposes the person's own agent over A2A or not, with the
// skills its card lists (§18). slug is as OwnAgent takes it; another's
// agent is not_found; bad skills are invalid and change nothing.
// Exposing is no consent to be reached: who may call it is still §3's
// rule (a public agent is within everyone's reach).
func (h *Hub) SetAgentA2A(ctx context.Context, u *User, slug string, s A2ASetting) (*ExposedAgent, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	var skills []Skill
	if s.Skills != nil {
		if skills, err = checkSkills(s.Skills); err != nil {
			return nil, err
		}
	}
	var e *A2AExposure
	err = h.store.Update(ctx, func(tx Tx) error {
		old, err := tx.A2AExposure(ctx, a.ID)
		switch {
		case errors.Is(err, ErrNoRows):
			old = &A2AExposure{AgentID: a.ID, Skills: []Skill{}}
		case err != nil:
			return err
		}
		e = &A2AExposure{AgentID: a.ID, Exposed: s.Exposed, Skills: old.Skills, UpdatedAt: h.now()}
		if skills != nil {
			e.Skills = skills
		}
		return tx.PutA2AExposure(ctx, e)
	})
	if err != nil {
		return nil, AsError(err)
	}
	return &ExposedAgent{Agent: a, Exposure: e}, nil
}

// AgentA2A is the person's own agent's A2A setting (not exposed, no
// skills when never set).
func (h *Hub) AgentA2A(ctx context.Context, u *User, slug string) (*ExposedAgent, error) {
	a, err := h.OwnAgent(ctx, u, slug)
	if err != nil {
		return nil, err
	}
	e, err := exposureOf(ctx, h.store, a.ID)
	if err != nil {
		return nil, err
	}
	return &ExposedAgent{Agent: a, Exposure: e}, nil
}

func exposureOf(ctx context.Context, r Reader, agentID string) (*A2AExposure, error) {
	e, err := r.A2AExposure(ctx, agentID)
	if errors.Is(err, ErrNoRows) {
		return &A2AExposure{AgentID: agentID, Skills: []Skill{}}, nil
	}
	if err != nil {
		return nil, AsError(err)
	}
	return e, nil
}

// errNoCard is the answer for an agent that is not exposed, archived or
// none at all: the same, so a card tells nothing of agents not shown (§15).
func errNoCard(owner, slug string) error {
	return notFound("no agent %s/%s takes A2A calls here; its owner exposes it on the agent's page", echo(owner), echo(slug))
}

// ExposedAgent is the agent owner/slug if its owner exposes it over A2A
// and it is not archived; else not_found, whoever asks (§18).
func (h *Hub) ExposedAgent(ctx context.Context, owner, slug string) (*ExposedAgent, error) {
	return exposedAgent(ctx, h.store, owner, slug)
}

func exposedAgent(ctx context.Context, r Reader, owner, slug string) (*ExposedAgent, error) {
	a, err := r.AgentByHandle(ctx, owner, slug)
	if errors.Is(err, ErrNoRows) {
		return nil, errNoCard(owner, slug)
	}
	if err != nil {
		return nil, AsError(err)
	}
	e, err := exposureOf(ctx, r, a.ID)
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
func (h *Hub) ExposedAgents(ctx context.Context, owner string) ([]*ExposedAgent, error) {
	missing := notFound("%s exposes no agent over A2A here", echo(owner))
	u, err := h.store.UserByHandle(ctx, owner)
	if errors.Is(err, ErrNoRows) {
		return nil, missing
	}
	if err != nil {
		return nil, AsError(err)
	}
	agents, err := h.store.ExposedAgents(ctx, u.ID)
	if err != nil {
		return nil, AsError(err)
	}
	if len(agents) == 0 {
		return nil, missing
	}
	out := make([]*ExposedAgent, 0, len(agents))
	for _, a := range agents {
		e, err := exposureOf(ctx, h.store, a.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, &ExposedAgent{Agent: a, Exposure: e})
	}
	return out, nil
}

// A2AReads are the queries of a2a (Reader embeds them).
type A2AReads interface {
	// A2AExposure is the agent's A2A setting (§18); ErrNoRows when it was
	// never set.
	A2AExposure(ctx context.Context, agentID string) (*A2AExposure, error)
	// ExposedAgents lists the owner's agents exposed over A2A that are not
	// archived, by slug.
	ExposedAgents(ctx context.Context, ownerID string) ([]*Agent, error)
	// A2ARequest finds the A2A request a message is (ErrNoRows: none).
	A2ARequest(ctx context.Context, messageID string) (*A2ARequest, error)
	// A2ACallers lists who sent A2A requests to the agent in a
	// conversation, each once.
	A2ACallers(ctx context.Context, conversationID, agentID string) ([]string, error)
	// A2ARequestsFrom lists the caller's A2A requests to the agent, only
	// those in conversationID unless it is "", newest first (by created
	// at, then message id): at most limit of them, those after before
	// (nil: from the newest); and how many there are before paging.
	A2ARequestsFrom(ctx context.Context, callerID, agentID, conversationID string, before *A2ARequest, limit int) ([]*A2ARequest, int, error)
}

// A2AWrites are the writes of a2a (Tx embeds them).
type A2AWrites interface {
	// PutA2AExposure stores the agent's A2A setting, replacing any.
	PutA2AExposure(ctx context.Context, e *A2AExposure) error
	InsertA2ARequest(ctx context.Context, r *A2ARequest) error
}
