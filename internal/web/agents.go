package web

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/webhook"
)

// Agents (§1, §2, §5): create, set mode, make public or private, mint and revoke tokens, see named
// sessions and grants, archive and bring back.

func (w *Web) agents(ctx context.Context, r *request) (*reply, error) {
	as, err := w.hub.Agents(ctx, r.user.Handle, true)
	if err != nil {
		return nil, err
	}
	rs, err := w.remotes.List(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return &reply{page: "agents", data: agentsPage{Agents: as, Remotes: rs}}, nil
}

func (w *Web) createAgent(ctx context.Context, r *request) (*reply, error) {
	a, err := w.hub.CreateOwnAgent(ctx, r.user, strings.TrimSpace(form(r, "slug")), form(r, "description"), form(r, "goal"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: agentPath(a), notice: "Created " + a.Handle() + ". Mint it a token to connect it."}, nil
}

func agentPath(a *hub.Agent) string { return "/agents/" + url.PathEscape(a.Slug) }

func (w *Web) agent(ctx context.Context, r *request) (*reply, error) {
	d, err := w.overview.AgentDetail(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	hooks, err := w.hooks.Of(ctx, d.Agent)
	if err != nil {
		return nil, err
	}
	clients, err := w.oauth.AgentClients(ctx, r.user, d.Agent.Slug)
	if err != nil {
		return nil, err
	}
	return &reply{page: "agent", data: agentPage{AgentDetail: d, Webhooks: hooks, Clients: clients, Modes: hub.Modes, Scopes: hub.AllScopes, InUse: d.TokensInUse(w.hub.Now()),
		CardURL: w.siteURL(r) + tasks.CardPath(d.Agent), Skills: tasks.SkillLines(d.A2A.Skills)}}, nil
}

// agentPage is the agent's page: its detail and the choices its forms offer.
type agentPage struct {
	*overview.AgentDetail
	Webhooks []webhook.View      // its endpoints and their delivery logs (§18)
	Clients  []oauth.AgentClient // OAuth clients acting as it (§10.6)
	Modes    []string
	Scopes   []string
	CardURL  string // where A2A clients find its Agent Card (§18)
	Skills   string // its card's skills, one "Name: description" a line
	InUse    int    // its tokens that still work
}

// own is the person's agent named in the path (another's is not_found).
func (w *Web) own(ctx context.Context, r *request) (*hub.Agent, error) {
	return w.hub.OwnAgent(ctx, r.user, r.PathValue("slug"))
}

func (w *Web) setMode(ctx context.Context, r *request) (*reply, error) {
	a, err := w.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if a, err = w.hub.SetAgentMode(ctx, a.Handle(), form(r, "mode")); err != nil {
		return nil, err
	}
	return &reply{redirect: agentPath(a), notice: a.Handle() + " is now in " + a.Mode + " mode."}, nil
}

// setPublic makes the agent public (the button's public=1) or private
// (public=0), §1.
func (w *Web) setPublic(ctx context.Context, r *request) (*reply, error) {
	var public bool
	switch form(r, "public") {
	case "1":
		public = true
	case "0":
	default:
		return nil, hub.Errorf(hub.KindInvalid, "public is 1 (make the agent public) or 0 (private), got %q", form(r, "public"))
	}
	a, err := w.hub.SetAgentPublic(ctx, r.user, r.PathValue("slug"), public)
	if err != nil {
		return nil, err
	}
	notice := a.Handle() + " is now private: only those you let in can reach it."
	if a.Public {
		notice = a.Handle() + " is now public: anyone on this server can add it to a conversation and talk to it."
	}
	return &reply{redirect: agentPath(a), notice: notice}, nil
}

// setA2A exposes the agent over A2A (the checkbox's exposed=1) or not,
// with the skills written one a line (§18).
func (w *Web) setA2A(ctx context.Context, r *request) (*reply, error) {
	var exposed bool
	switch form(r, "exposed") {
	case "1":
		exposed = true
	case "", "0":
	default:
		return nil, hub.Errorf(hub.KindInvalid, "exposed is 1 (expose the agent over A2A) or left out (do not), got %q", form(r, "exposed"))
	}
	ea, err := w.tasks.SetExposure(ctx, r.user, r.PathValue("slug"), tasks.Setting{Exposed: exposed, Skills: tasks.ParseSkills(form(r, "skills"))})
	if err != nil {
		return nil, err
	}
	notice := ea.Agent.Handle() + " is not exposed over A2A: it has no Agent Card."
	if ea.Exposure.Exposed {
		notice = ea.Agent.Handle() + " is exposed over A2A, with " + strconv.Itoa(len(ea.Exposure.Skills)) + " skills on its Agent Card."
	}
	return &reply{redirect: agentPath(ea.Agent), notice: notice}, nil
}

// tokenPage shows a token minted just now, its secret this once.
type tokenPage struct {
	Agent  *hub.Agent
	Token  *hub.Token
	Secret string
	MCPURL string // where the token is used: the MCP endpoint, or /api/v1/ for a person's
}

// mintToken answers with the new token's page, not a redirect: the secret
// is shown once and kept nowhere.
func (w *Web) mintToken(ctx context.Context, r *request) (*reply, error) {
	a, err := w.own(ctx, r)
	if err != nil {
		return nil, err
	}
	scopes := []string{}
	if ticked := r.PostForm["scope"]; len(ticked) > 0 {
		if scopes, err = hub.ParseScopes(strings.Join(ticked, ",")); err != nil {
			return nil, err
		}
	}
	days, err := wholeNumber(form(r, "expires_in_days"), "expires in (days)")
	if err != nil {
		return nil, err
	}
	t, secret, err := w.hub.MintToken(ctx, hub.TokenSpec{Owner: r.user.Handle, Agent: a.Slug, Scopes: scopes, Expires: hub.Days(days), Name: form(r, "name")})
	if err != nil {
		return nil, err
	}
	return &reply{page: "token", data: tokenPage{Agent: a, Token: t, Secret: secret, MCPURL: w.siteURL(r) + "/mcp/"}}, nil
}

// wholeNumber reads an optional whole number field ("" is 0).
func wholeNumber(s, label string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, hub.Errorf(hub.KindInvalid, "%s is a whole number of 0 or more (got %q)", label, s)
	}
	return n, nil
}

func (w *Web) revokeToken(ctx context.Context, r *request) (*reply, error) {
	t, err := w.hub.RevokeOwnToken(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/agents/" + url.PathEscape(r.PathValue("slug")), notice: "Revoked " + tokenLabel(t) + "; its next request is refused."}, nil
}

func tokenLabel(t *hub.Token) string {
	if t.Name != "" {
		return "the token " + strconv.Quote(t.Name)
	}
	return "token " + t.ID
}

func (w *Web) setGrant(ctx context.Context, r *request) (*reply, error) {
	a, err := w.own(ctx, r)
	if err != nil {
		return nil, err
	}
	contact := strings.TrimSpace(form(r, "contact"))
	g, err := w.hub.SetGrant(ctx, r.user, a.Handle(), contact, form(r, "allow_human") != "", form(r, "allow_agents") != "")
	if err != nil {
		return nil, err
	}
	return &reply{redirect: agentPath(a), notice: grantNotice(a.Handle(), contact, g)}, nil
}

func grantNotice(agent, contact string, g *hub.Grant) string {
	switch {
	case g.AllowHuman && g.AllowAgents:
		return agent + " may reach " + contact + " and their agents."
	case g.AllowHuman:
		return agent + " may reach " + contact + ", not their agents."
	case g.AllowAgents:
		return agent + " may reach " + contact + "'s agents, not " + contact + "."
	}
	return agent + " may no longer reach " + contact + " or their agents."
}

// archive archives the agent (its tokens die) or brings it back.
func (w *Web) archive(archived bool) handler {
	return func(ctx context.Context, r *request) (*reply, error) {
		a, err := w.own(ctx, r)
		if err != nil {
			return nil, err
		}
		if archived {
			if a, err = w.hub.ArchiveAgent(ctx, a.Handle()); err != nil {
				return nil, err
			}
			return &reply{redirect: agentPath(a), notice: a.Handle() + " is archived; its tokens are revoked."}, nil
		}
		if a, err = w.hub.UnarchiveAgent(ctx, a.Handle()); err != nil {
			return nil, err
		}
		return &reply{redirect: agentPath(a), notice: a.Handle() + " is back; mint it a new token to connect it."}, nil
	}
}

// revokeClient ends an OAuth client's tokens for the agent (§10.6).
func (w *Web) revokeClient(ctx context.Context, r *request) (*reply, error) {
	c, err := w.oauth.RevokeAgentClient(ctx, r.user, r.PathValue("slug"), form(r, "client_id"))
	if err != nil {
		return nil, err
	}
	return &reply{redirect: "/agents/" + url.PathEscape(r.PathValue("slug")), notice: "Revoked " + c.Name + "; its next request is refused."}, nil
}
