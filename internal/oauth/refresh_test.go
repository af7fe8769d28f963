package oauth_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

func (w *world) refresh(clientID, token string) (*oauth.IssuedTokens, error) {
	return w.auth.ExchangeToken(ctx, oauth.TokenRequest{GrantType: "refresh_token", ClientID: clientID, RefreshToken: token})
}

// TestOAuthRefreshGrace: a refresh token sent again within RefreshGrace of
// its use gets the very tokens its use gave — as a client that refreshes
// in parallel needs — and both keep working; the server keeps them only
// sealed, never in the clear. Sent again after the grace, it revokes every
// token of the grant.
func TestOAuthRefreshGrace(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead, hub.ScopeWrite)
	first := w.exchange(t, id, code)
	second, err := w.refresh(id, first.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(oauth.RefreshGrace - time.Second)
	again, err := w.refresh(id, first.RefreshToken)
	if err != nil {
		t.Fatalf("the same refresh token %v later: %v", oauth.RefreshGrace-time.Second, err)
	}
	want := &oauth.IssuedTokens{AccessToken: second.AccessToken, RefreshToken: second.RefreshToken,
		ExpiresIn: oauth.AccessTokenLifetime - (oauth.RefreshGrace - time.Second), Scopes: []string{hub.ScopeRead, hub.ScopeWrite}}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Fatalf("the second answer (-want +got):\n%s", diff)
	}
	for _, tok := range []string{second.AccessToken} {
		if _, err := w.hub.Authenticate(ctx, tok); err != nil {
			t.Fatalf("the access token both answers gave: %v", err)
		}
	}
	// What the used token keeps holds neither token in the clear.
	used, _, _, err := w.store.TokenByHash(ctx, hub.HashToken(first.RefreshToken))
	if err != nil || len(used.Successor) == 0 {
		t.Fatalf("the used refresh token's row: %+v %v; want its successor kept", used, err)
	}
	for _, secret := range []string{second.AccessToken, second.RefreshToken} {
		if bytes.Contains(used.Successor, []byte(secret)) || bytes.Contains(used.Successor, []byte(secret[4:20])) {
			t.Fatalf("the successor is kept in the clear: %q", used.Successor)
		}
	}

	// Past the grace, the same token is reuse: the grant ends.
	w.clock.Advance(time.Second)
	_, err = w.refresh(id, first.RefreshToken)
	oauthCode(t, err, oauth.OAuthInvalidGrant)
	if !strings.Contains(hub.AsError(err).Msg, "already used") {
		t.Errorf("reuse after the grace: %v", err)
	}
	if _, err := w.hub.Authenticate(ctx, second.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after reuse, the tokens the refresh gave: %v", err)
	}
	if _, err := w.refresh(id, second.RefreshToken); err == nil {
		t.Fatal("after reuse, the new refresh token still refreshes")
	}
}

// TestOAuthRefreshInParallel: refreshes sent at once with one refresh
// token all get the same new pair, and the grant stays.
func TestOAuthRefreshInParallel(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead)
	first := w.exchange(t, id, code)
	const n = 6
	got := make([]*oauth.IssuedTokens, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = w.refresh(id, first.RefreshToken) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("refresh %d of %d at once: %v", i+1, n, errs[i])
		}
		if got[i].AccessToken != got[0].AccessToken || got[i].RefreshToken != got[0].RefreshToken {
			t.Fatalf("refresh %d gave other tokens than refresh 1", i+1)
		}
	}
	if _, err := w.hub.Authenticate(ctx, got[0].AccessToken); err != nil {
		t.Fatalf("the one new access token: %v", err)
	}
	if _, err := w.refresh(id, got[0].RefreshToken); err != nil {
		t.Fatalf("the one new refresh token: %v", err)
	}
}

// TestOAuthRefreshWhenSuccessorUsed: within the grace, a used refresh
// token whose successor was itself used since is reuse, not a parallel
// refresh.
func TestOAuthRefreshWhenSuccessorUsed(t *testing.T) {
	w := newWorld(t)
	id, code := w.authorize(t, hub.ScopeRead)
	first := w.exchange(t, id, code)
	second, err := w.refresh(id, first.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Second)
	third, err := w.refresh(id, second.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.refresh(id, first.RefreshToken)
	oauthCode(t, err, oauth.OAuthInvalidGrant)
	if _, err := w.hub.Authenticate(ctx, third.AccessToken); hub.AsError(err).Kind != hub.KindUnauthenticated {
		t.Fatalf("after the first refresh token came back, the newest access token: %v", err)
	}
}

// TestOAuthRefreshArchived: a refresh for an archived agent says the agent
// is archived — not that the token was reused — and logs no reuse; once
// the agent is back, its authorization stays revoked.
func TestOAuthRefreshArchived(t *testing.T) {
	w := newWorld(t)
	var logs bytes.Buffer
	w.options = func(_ *hub.Options, o *oauth.AuthorityOptions) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }
	w.reopen(t)
	id, code := w.authorize(t, hub.ScopeRead)
	first := w.exchange(t, id, code)
	if _, err := w.hub.ArchiveAgent(ctx, "alice/planner"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{first.RefreshToken, first.RefreshToken} { // and again: still not reuse
		_, err := w.refresh(id, tok)
		oauthCode(t, err, oauth.OAuthInvalidGrant)
		if msg := hub.AsError(err).Msg; !strings.Contains(msg, "alice/planner is archived") || strings.Contains(msg, "already used") {
			t.Errorf("refreshing for an archived agent: %q; want it to say the agent is archived", msg)
		}
	}
	// Brought back, the agent's old authorization stays ended (its
	// credentials are not restored, §1), and still nothing was reused.
	if _, err := w.hub.UnarchiveAgent(ctx, "alice/planner"); err != nil {
		t.Fatal(err)
	}
	_, err := w.refresh(id, first.RefreshToken)
	if oauthCode(t, err, oauth.OAuthInvalidGrant); !strings.Contains(hub.AsError(err).Msg, "the authorization was revoked") {
		t.Errorf("refreshing after the agent came back: %v; want the authorization revoked", err)
	}
	if cs, _ := w.auth.AgentClients(ctx, w.person(t, "alice"), "planner"); len(cs) != 0 {
		t.Errorf("the agent's clients after archiving: %+v; want none", cs)
	}
	if strings.Contains(logs.String(), "refresh token came back") {
		t.Errorf("the log warns of reuse: %s", logs.String())
	}
}
