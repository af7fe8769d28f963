package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/hub"
)

// a2aView is an agent's A2A setting (§18): whether A2A clients reach it
// by its card, at which path, and the skills the card lists.
type a2aView struct {
	Agent    string      `json:"agent"`
	Exposed  bool        `json:"exposed"`
	Skills   []skillView `json:"skills"`
	CardPath string      `json:"card_path"`
}

type skillView struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

func newA2AView(ea *tasks.ExposedAgent) a2aView {
	skills := viewsOf(ea.Exposure.Skills, func(s hub.Skill) skillView { return skillView{ID: s.ID, Name: s.Name, Description: s.Description} })
	return a2aView{Agent: ea.Agent.Handle(), Exposed: ea.Exposure.Exposed, Skills: skills, CardPath: tasks.CardPath(ea.Agent)}
}

func (a *API) agentA2A(ctx context.Context, r *request) (any, error) {
	ea, err := a.tasks.Exposure(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	return newA2AView(ea), nil
}

// setA2A exposes the agent over A2A or not (§18): {"exposed": true|false,
// "skills": [{"name", "description"}]}; skills left out are kept, an empty
// list clears them.
func (a *API) setA2A(ctx context.Context, r *request) (any, error) {
	var in struct {
		Exposed *bool `json:"exposed"`
		Skills  *[]struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"skills"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if in.Exposed == nil {
		return nil, &hub.Error{Kind: hub.KindInvalid, Msg: `exposed is required: {"exposed": true} gives the agent an Agent Card for A2A clients, {"exposed": false} takes it away`}
	}
	s := tasks.Setting{Exposed: *in.Exposed}
	if in.Skills != nil {
		s.Skills = []hub.Skill{}
		for _, sk := range *in.Skills {
			s.Skills = append(s.Skills, hub.Skill{Name: sk.Name, Description: sk.Description})
		}
	}
	ea, err := a.tasks.SetExposure(ctx, r.user, r.PathValue("slug"), s)
	if err != nil {
		return nil, err
	}
	return newA2AView(ea), nil
}
