package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

var timeText = hub.FormatTime

func (a *API) me(ctx context.Context, r *request) (any, error) {
	return map[string]any{"handle": r.user.Handle, "name": r.user.Name}, nil
}

// ---- contacts

func contactView(c *hub.Contact, other *hub.User, me *hub.User) map[string]any {
	by := other.Handle
	if c.RequestedBy == me.ID {
		by = me.Handle
	}
	return map[string]any{"handle": other.Handle, "name": other.Name, "status": c.Status,
		"requested_by": by, "message": c.Message, "requested_at": timeText(c.RequestedAt), "decided_at": timeText(c.DecidedAt)}
}

// contacts is everything of §3 the person decides: contacts and requests
// both ways, their agents' grants, and other owners' agents' asks to come
// in (decided ones too: a decision may be changed).
func (a *API) contacts(ctx context.Context, r *request) (any, error) {
	v, err := a.hub.Consent(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, c := range v.Contacts {
		out = append(out, contactView(c.Contact, c.Other, r.user))
	}
	grants := []map[string]any{}
	for _, g := range v.Grants {
		grants = append(grants, grantView(g))
	}
	inbound := []map[string]any{}
	for _, in := range v.Inbound {
		inbound = append(inbound, map[string]any{"id": in.Ask.ID, "agent": in.Agent, "handles": in.Ask.Handles, "status": in.Ask.Status,
			"at": timeText(in.Ask.CreatedAt), "decided_at": timeText(in.Ask.DecidedAt)})
	}
	return map[string]any{"contacts": out, "grants": grants, "inbound": inbound}, nil
}

func grantView(g hub.GrantView) map[string]any {
	return map[string]any{"agent": g.Agent, "contact": g.Contact, "allow_human": g.Grant.AllowHuman, "allow_agents": g.Grant.AllowAgents,
		"updated_at": timeText(g.Grant.UpdatedAt)}
}

func (a *API) requestContact(ctx context.Context, r *request) (any, error) {
	var in struct {
		Handle  string `json:"handle"`
		Message string `json:"message"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	c, err := a.hub.RequestContact(ctx, r.user, in.Handle, in.Message)
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}

func (a *API) contactResult(ctx context.Context, c *hub.Contact, me *hub.User) (any, error) {
	other, err := a.hub.UserByID(ctx, c.Other(me.ID))
	if err != nil {
		return nil, err
	}
	return contactView(c, other, me), nil
}

func (a *API) contactDecision(accept bool) handler {
	return func(ctx context.Context, r *request) (any, error) {
		c, err := a.hub.DecideContact(ctx, r.user, r.PathValue("handle"), accept)
		if err != nil {
			return nil, err
		}
		return a.contactResult(ctx, c, r.user)
	}
}

func (a *API) cancelContact(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.CancelContact(ctx, r.user, r.PathValue("handle"))
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}

func (a *API) removeContact(ctx context.Context, r *request) (any, error) {
	c, err := a.hub.RemoveContact(ctx, r.user, "", r.PathValue("handle"))
	if err != nil {
		return nil, err
	}
	return a.contactResult(ctx, c, r.user)
}

// ---- approvals

func (a *API) approvals(ctx context.Context, r *request) (any, error) {
	items, ended, err := a.hub.ApprovalsAndEnded(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, it := range items {
		v := map[string]any{"id": it.ID, "kind": it.Kind, "agent": it.Agent, "at": timeText(it.At), "untrusted": true}
		switch {
		case it.Message != nil:
			v["conversation_id"], v["body"], v["summary"] = it.Message.ConversationID, it.Message.Body, it.Message.Summary
		case it.Question != nil:
			v["question"], v["options"], v["conversation_id"] = it.Question.Question, it.Question.Options, it.Question.ConversationID
		case it.Grant != nil:
			v["contact"], v["allow_human"], v["allow_agents"], v["reason"] = it.Contact, it.Grant.AllowHuman, it.Grant.AllowAgents, it.Grant.Reason
		case it.Ask != nil:
			v["handles"] = it.Ask.Handles
		case it.Project != nil:
			v["request_kind"], v["name"], v["description"], v["reason"] = it.Project.Kind, it.Project.Name, it.Project.Description, it.Project.Reason
			if it.Project.Kind == hub.RequestAccess {
				v["project_id"], v["name"] = it.Project.ProjectID, it.ProjectName
			}
		case it.Kind == hub.ApprovalContactRequest:
			v["from"] = it.Contact
		case it.Permission != nil:
			v = permissionView(it.Permission)
		}
		out = append(out, v)
	}
	endedOut := []map[string]any{}
	for _, p := range ended {
		endedOut = append(endedOut, permissionView(p))
	}
	return map[string]any{"approvals": out, "ended_permissions": endedOut}, nil
}

// decide gives a verdict (approve, reject or answer) on whatever waits
// under the id; the body may carry a held message's new words or a
// question's answer.
func (a *API) decide(action string) handler {
	return func(ctx context.Context, r *request) (any, error) {
		var in struct {
			Body   string `json:"body"`
			Answer string `json:"answer"`
		}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		d, err := a.hub.Decide(ctx, r.user, r.PathValue("id"), hub.Verdict{Action: action, Body: in.Body, Answer: in.Answer})
		if err != nil {
			return nil, err
		}
		switch {
		case d.Grant != nil:
			return map[string]any{"id": d.Grant.ID, "status": d.Grant.Status}, nil
		case d.Ask != nil:
			return map[string]any{"id": d.Ask.ID, "status": d.Ask.Status}, nil
		case d.Question != nil:
			return map[string]any{"id": d.Question.ID, "answer": d.Question.Answer}, nil
		case d.Project != nil:
			return map[string]any{"id": d.Project.ID, "status": d.Project.Status, "project_id": d.Project.ProjectID}, nil
		case d.Contact != nil:
			return map[string]any{"id": d.Contact.ID, "status": d.Contact.Status}, nil
		case d.Permission != nil:
			return permissionView(d.Permission), nil
		}
		return map[string]any{"id": d.Message.ID, "status": d.Message.Status, "seq": d.Message.Seq, "authority": d.Message.Authority}, nil
	}
}

// ---- agents, grants and tokens

func agentView(ag *hub.Agent) map[string]any {
	return map[string]any{"handle": ag.Handle(), "description": ag.Description, "goal": ag.Goal, "mode": ag.Mode,
		"public": ag.Public, "created_at": timeText(ag.CreatedAt), "archived_at": timeText(ag.ArchivedAt)}
}

func (a *API) agents(ctx context.Context, r *request) (any, error) {
	as, err := a.hub.Agents(ctx, r.user.Handle, false)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, ag := range as {
		out = append(out, agentView(ag))
	}
	return map[string]any{"agents": out}, nil
}

func (a *API) createAgent(ctx context.Context, r *request) (any, error) {
	var in struct {
		Slug        string `json:"slug"`
		Description string `json:"description"`
		Goal        string `json:"goal"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.hub.CreateOwnAgent(ctx, r.user, in.Slug, in.Description, in.Goal)
	if err != nil {
		return nil, err
	}
	return agentView(ag), nil
}

// own is the person's agent with this slug (another's is not_found).
func (a *API) own(ctx context.Context, r *request) (*hub.Agent, error) {
	return a.hub.OwnAgent(ctx, r.user, r.PathValue("slug"))
}

// agent is one of the person's agents with its tokens, named sessions and
// grants.
func (a *API) agent(ctx context.Context, r *request) (any, error) {
	d, err := a.hub.AgentDetail(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	v := agentView(d.Agent)
	tokens, instances, grants := []map[string]any{}, []map[string]any{}, []map[string]any{}
	for _, t := range d.Tokens {
		tokens = append(tokens, tokenView(t))
	}
	for _, in := range d.Instances {
		instances = append(instances, map[string]any{"name": in.Name, "note": in.Note, "last_seen_at": timeText(in.LastSeen)})
	}
	for _, g := range d.Grants {
		grants = append(grants, grantView(g))
	}
	hooks := []map[string]any{}
	for _, w := range d.Webhooks {
		hooks = append(hooks, webhookView(w))
	}
	v["tokens"], v["instances"], v["grants"], v["webhooks"] = tokens, instances, grants, hooks
	return v, nil
}

func (a *API) unarchiveAgent(ctx context.Context, r *request) (any, error) {
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.UnarchiveAgent(ctx, ag.Handle()); err != nil {
		return nil, err
	}
	return agentView(ag), nil
}

func (a *API) archiveAgent(ctx context.Context, r *request) (any, error) {
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.ArchiveAgent(ctx, ag.Handle()); err != nil {
		return nil, err
	}
	return agentView(ag), nil
}

func (a *API) setMode(ctx context.Context, r *request) (any, error) {
	var in struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	if ag, err = a.hub.SetAgentMode(ctx, ag.Handle(), in.Mode); err != nil {
		return nil, err
	}
	return agentView(ag), nil
}

// setPublic marks the agent public or private (§1): {"public": true|false}.
func (a *API) setPublic(ctx context.Context, r *request) (any, error) {
	var in struct {
		Public *bool `json:"public"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if in.Public == nil {
		return nil, &hub.Error{Kind: hub.KindInvalid, Msg: `public is required: {"public": true} makes the agent public, {"public": false} private`}
	}
	ag, err := a.hub.SetAgentPublic(ctx, r.user, r.PathValue("slug"), *in.Public)
	if err != nil {
		return nil, err
	}
	return agentView(ag), nil
}

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
	return map[string]any{"agent": ag.Handle(), "contact": r.PathValue("contact"), "allow_human": g.AllowHuman, "allow_agents": g.AllowAgents}, nil
}

// agentInbox is what waits in one of the person's agents' inbox, with each
// delivery's processing state (§5).
func (a *API) agentInbox(ctx context.Context, r *request) (any, error) {
	limit, err := intQuery(r, "limit", hub.InboxPage.Range(), 0)
	if err != nil {
		return nil, err
	}
	in, err := a.hub.AgentInbox(ctx, r.user, r.PathValue("slug"), int(limit))
	if err != nil {
		return nil, err
	}
	rows := []map[string]any{}
	for _, it := range in.Items {
		rows = append(rows, map[string]any{"message_id": it.Message.ID, "conversation_id": it.Message.ConversationID, "seq": it.Message.Seq,
			"sender": it.Message.SenderHandle, "summary": it.Message.SummaryLine(),
			"state": it.Delivery.State, "attempts": it.Delivery.Attempts, "error": it.Delivery.Error, "stuck": a.hub.Stuck(&it.Delivery),
			"already_read": it.AlreadyRead(), "at": timeText(it.Message.CreatedAt)})
	}
	return map[string]any{"total": in.Total, "messages": rows, "more": in.More, "untrusted": true}, nil
}

func tokenView(t *hub.Token) map[string]any {
	scopes := t.Scopes
	if scopes == nil {
		scopes = []string{} // a person's token has none: it acts as them
	}
	return map[string]any{"id": t.ID, "name": t.Name, "scopes": scopes, "created_at": timeText(t.CreatedAt),
		"last_used_at": timeText(t.LastUsedAt), "expires_at": timeText(t.ExpiresAt), "revoked_at": timeText(t.RevokedAt)}
}

func (a *API) tokens(ctx context.Context, r *request) (any, error) {
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	ts, err := a.hub.Tokens(ctx, r.user.Handle, ag.Slug)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, t := range ts {
		out = append(out, tokenView(t))
	}
	return map[string]any{"tokens": out}, nil
}

func (a *API) mintToken(ctx context.Context, r *request) (any, error) {
	var in struct {
		Name          string `json:"name"`
		Scopes        string `json:"scopes"`
		ExpiresInDays int64  `json:"expires_in_days"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	ag, err := a.own(ctx, r)
	if err != nil {
		return nil, err
	}
	scopes, err := hub.ParseScopes(in.Scopes)
	if err != nil {
		return nil, err
	}
	t, secret, err := a.hub.MintToken(ctx, hub.TokenSpec{Owner: r.user.Handle, Agent: ag.Slug, Scopes: scopes,
		Expires: hub.Days(in.ExpiresInDays), Name: in.Name})
	if err != nil {
		return nil, err
	}
	v := tokenView(t)
	v["token"] = secret // shown this once
	return v, nil
}

func (a *API) revokeToken(ctx context.Context, r *request) (any, error) {
	t, err := a.hub.RevokeOwnToken(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return tokenView(t), nil
}

// ---- webhooks (§18)

// webhookView is an endpoint with its delivery log, newest first.
func webhookView(v hub.WebhookView) map[string]any {
	out := map[string]any{"id": v.ID, "url": v.URL, "enabled": v.Enabled(), "created_at": timeText(v.CreatedAt),
		"disabled_at": timeText(v.DisabledAt), "disabled_reason": v.DisabledReason, "pending": v.Pending}
	log := []map[string]any{}
	for _, a := range v.Attempts {
		log = append(log, map[string]any{"at": timeText(a.At), "webhook_id": a.CallID, "type": a.Type, "ok": a.OK(),
			"status": a.Status, "error": a.Error, "duration_ms": a.Duration.Milliseconds()})
	}
	out["attempts"] = log
	return out
}

func (a *API) webhooks(ctx context.Context, r *request) (any, error) {
	vs, err := a.hub.Webhooks(ctx, r.user, r.PathValue("slug"))
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, v := range vs {
		out = append(out, webhookView(v))
	}
	return map[string]any{"webhooks": out}, nil
}

// addWebhook answers with the endpoint and its signing secret, shown this
// once.
func (a *API) addWebhook(ctx context.Context, r *request) (any, error) {
	var in struct {
		URL string `json:"url"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	w, secret, err := a.hub.AddWebhook(ctx, r.user, r.PathValue("slug"), in.URL)
	if err != nil {
		return nil, err
	}
	v := webhookView(hub.WebhookView{Webhook: w})
	v["secret"] = secret
	return v, nil
}

func (a *API) removeWebhook(ctx context.Context, r *request) (any, error) {
	w, err := a.hub.RemoveWebhook(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": w.ID, "removed": true}, nil
}

func (a *API) enableWebhook(ctx context.Context, r *request) (any, error) {
	w, err := a.hub.EnableWebhook(ctx, r.user, r.PathValue("slug"), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return webhookView(hub.WebhookView{Webhook: w}), nil
}
