package api

import (
	"context"
	"net/url"

	"github.com/palaverhq/palaver/internal/hub"
)

// A person's own events and API tokens, and for the admin how people join
// (§6, §11.1).

// events is a long-poll on the person's own event stream (§6): every event
// after cursor at once, or the first one to come within timeout_s.
func (a *API) events(ctx context.Context, r *request) (any, error) {
	var timeout *int64
	if r.URL.Query().Get("timeout_s") != "" {
		n, err := intQuery(r, "timeout_s", hub.WaitRange, 0)
		if err != nil {
			return nil, err
		}
		timeout = &n
	}
	d, err := hub.WaitTimeout(timeout)
	if err != nil {
		return nil, err
	}
	res, err := a.hub.WaitPerson(ctx, r.user, r.URL.Query().Get("cursor"), d)
	if err != nil {
		return nil, err
	}
	events := []map[string]any{}
	for _, e := range res.Events {
		v := map[string]any{"cursor": a.hub.Cursor(e), "type": e.Type, "at": timeText(e.CreatedAt)}
		if e.ConversationID != "" {
			v["conversation_id"] = e.ConversationID
		}
		if e.MessageID != "" {
			v["message_id"] = e.MessageID
		}
		if len(e.Data) > 0 {
			v["data"] = e.Data
		}
		if e.Message != nil {
			v["message"] = messageView(e.Message)
		}
		events = append(events, v)
	}
	return map[string]any{"events": events, "cursor": res.Cursor, "timed_out": res.TimedOut, "untrusted": true}, nil
}

func (a *API) userTokens(ctx context.Context, r *request) (any, error) {
	ts, err := a.hub.APITokens(ctx, r.user)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, t := range ts {
		out = append(out, tokenView(t))
	}
	return map[string]any{"tokens": out}, nil
}

func (a *API) mintUserToken(ctx context.Context, r *request) (any, error) {
	var in struct {
		Name          string `json:"name"`
		ExpiresInDays int64  `json:"expires_in_days"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	t, secret, err := a.hub.MintUserToken(ctx, r.user.Handle, in.Name, hub.Days(in.ExpiresInDays))
	if err != nil {
		return nil, err
	}
	v := tokenView(t)
	v["token"] = secret // shown this once
	return v, nil
}

// people is, for the admin, everyone signed up and how people join.
func (a *API) people(ctx context.Context, r *request) (any, error) {
	us, err := a.hub.Users(ctx, r.user)
	if err != nil {
		return nil, err
	}
	mode, err := a.hub.SignupMode(ctx)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, u := range us {
		out = append(out, map[string]any{"handle": u.Handle, "name": u.Name, "admin": u.Admin, "created_at": timeText(u.CreatedAt)})
	}
	return map[string]any{"people": out, "signup": mode}, nil
}

func (a *API) setSignup(ctx context.Context, r *request) (any, error) {
	var in struct {
		Mode string `json:"mode"`
	}
	if err := decode(r, &in); err != nil {
		return nil, err
	}
	if err := a.hub.SetSignupMode(ctx, r.user, in.Mode); err != nil {
		return nil, err
	}
	return map[string]any{"signup": in.Mode}, nil
}

// invite makes a one-time invitation; the link is shown this once.
func (a *API) invite(ctx context.Context, r *request) (any, error) {
	inv, secret, err := a.hub.CreateInvite(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": inv.ID, "path": "/signup?invite=" + url.QueryEscape(secret), "expires_at": timeText(inv.ExpiresAt)}, nil
}
