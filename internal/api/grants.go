package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// grantSetView is what an agent of the person may reach of a contact (§3).
type grantSetView struct {
	Agent       string `json:"agent"`
	Contact     string `json:"contact"`
	AllowHuman  bool   `json:"allow_human"`
	AllowAgents bool   `json:"allow_agents"`
}

// grantView is a grant as lists show it: with when it last changed.
type grantView struct {
	grantSetView
	UpdatedAt string `json:"updated_at"`
}

func grantViews(gs []hub.GrantView) []grantView {
	return viewsOf(gs, func(g hub.GrantView) grantView {
		return grantView{grantSetView: grantSetView{Agent: g.Agent, Contact: g.Contact, AllowHuman: g.Grant.AllowHuman, AllowAgents: g.Grant.AllowAgents},
			UpdatedAt: timeText(g.Grant.UpdatedAt)}
	})
}

// setGrant sets what the agent may reach of a contact: {"allow_human",
// "allow_agents"}.
func (a *API) setGrant(ctx context.Context, r *request) (any, error) {
	var in struct {
		AllowHuman  bool `json:"allow_human"`
		AllowAgents bool `json:"allow_agents"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	g, err := a.hub.SetGrant(ctx, r.user, ag.Handle(), r.PathValue("contact"), in.AllowHuman, in.AllowAgents)
	if err != nil {
		return nil, err
	}
	return grantSetView{Agent: ag.Handle(), Contact: r.PathValue("contact"), AllowHuman: g.AllowHuman, AllowAgents: g.AllowAgents}, nil
}
