package api

import (
	"context"

	"github.com/palaverhq/palaver/internal/hub"
)

// Tokens (§2): an agent's, and the person's own API tokens.

// tokenView is a token as listed: never its secret.
type tokenView struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt string   `json:"last_used_at"`
	ExpiresAt  string   `json:"expires_at"`
	RevokedAt  string   `json:"revoked_at"`
}

func newTokenView(t *hub.Token) tokenView {
	scopes := t.Scopes
	if scopes == nil {
		scopes = []string{} // a person's token has none: it acts as them
	}
	return tokenView{ID: t.ID, Name: t.Name, Scopes: scopes, CreatedAt: timeText(t.CreatedAt),
		LastUsedAt: timeText(t.LastUsedAt), ExpiresAt: timeText(t.ExpiresAt), RevokedAt: timeText(t.RevokedAt)}
}

type tokensView struct {
	Tokens []tokenView `json:"tokens"`
}

// mintedView is a token just made, with its secret, shown this once.
type mintedView struct {
	tokenView
	Token string `json:"token"`
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
	return tokensView{Tokens: viewsOf(ts, newTokenView)}, nil
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
	return mintedView{tokenView: newTokenView(t), Token: secret}, nil
}

func (a *API) revokeToken(ctx context.Context, r *request) (any, error) {
	t, err := a.hub.RevokeOwnToken(ctx, r.user, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return newTokenView(t), nil
}

func (a *API) userTokens(ctx context.Context, r *request) (any, error) {
	ts, err := a.hub.APITokens(ctx, r.user)
	if err != nil {
		return nil, err
	}
	return tokensView{Tokens: viewsOf(ts, newTokenView)}, nil
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
	return mintedView{tokenView: newTokenView(t), Token: secret}, nil
}
