package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// TestRefreshSuccessors: a refresh token used once keeps the successor it
// was used with; used again, it is ErrNoRows and keeps the first;
// ForgetSuccessors drops those of the grant's tokens used before a time;
// revoking the grant drops the rest; archiving the agent revokes its
// tokens and its grants (§10.6).
func TestRefreshSuccessors(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		u := insertUser(t, db, "alice")
		at := func(s int) time.Time { return time.UnixMilli(int64(s) * 1000).UTC() }
		a := &hub.Agent{ID: "agt_planner", OwnerID: u.ID, Slug: "planner", Mode: hub.ModeActive, CreatedAt: at(1)}
		c := &hub.OAuthClient{ID: "cli_x", Name: "X", RedirectURIs: []string{"http://127.0.0.1/cb"}, ApplicationType: "web", CreatedAt: at(1)}
		grant := func(id string) *hub.OAuthGrant {
			return &hub.OAuthGrant{ID: id, ClientID: c.ID, UserID: u.ID, AgentID: a.ID, Scopes: []string{hub.ScopeRead}, RedirectURI: c.RedirectURIs[0], CreatedAt: at(1)}
		}
		token := func(id, g string) *hub.Token {
			return &hub.Token{ID: id, Hash: []byte("hash-of-" + id), UserID: u.ID, AgentID: a.ID, Scopes: []string{hub.ScopeRead},
				CreatedAt: at(1), ExpiresAt: at(100000), GrantID: g}
		}
		toks := []*hub.Token{token("tok_r1", "oag_1"), token("tok_r2", "oag_1"), token("tok_r3", "oag_1"), token("tok_s1", "oag_2")}
		err := db.Update(ctx, func(tx hub.Tx) error {
			for _, f := range []func() error{
				func() error { return tx.InsertAgent(ctx, a) },
				func() error { return tx.PutOAuthClient(ctx, c) },
				func() error { return tx.InsertOAuthGrant(ctx, grant("oag_1")) },
				func() error { return tx.InsertOAuthGrant(ctx, grant("oag_2")) },
			} {
				if err := f(); err != nil {
					return err
				}
			}
			for _, tok := range toks {
				if err := tx.InsertToken(ctx, tok); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		use := func(id string, s int, successor string) error {
			return db.Update(ctx, func(tx hub.Tx) error { return tx.UseToken(ctx, id, at(s), []byte(successor)) })
		}
		successors := func() map[string]string {
			out := map[string]string{}
			for _, tok := range toks {
				got, _, _, err := db.TokenByHash(ctx, tok.Hash)
				if err != nil {
					t.Fatal(err)
				}
				out[tok.ID] = string(got.Successor)
			}
			return out
		}
		for _, u := range []struct {
			id string
			s  int
		}{{"tok_r1", 10}, {"tok_r2", 50}, {"tok_s1", 10}} {
			if err := use(u.id, u.s, "sealed "+u.id); err != nil {
				t.Fatal(err)
			}
		}
		if err := use("tok_r1", 60, "another"); !errors.Is(err, hub.ErrNoRows) {
			t.Fatalf("using a used token: %v; want ErrNoRows", err)
		}
		used, _, _, err := db.TokenByHash(ctx, []byte("hash-of-tok_r1"))
		if err != nil || !used.RevokedAt.Equal(at(10)) {
			t.Fatalf("the used token: %+v %v; want revoked when it was used", used, err)
		}
		want := map[string]string{"tok_r1": "sealed tok_r1", "tok_r2": "sealed tok_r2", "tok_r3": "", "tok_s1": "sealed tok_s1"}
		if diff := cmp.Diff(want, successors()); diff != "" {
			t.Fatalf("successors kept (-want +got):\n%s", diff)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.ForgetSuccessors(ctx, "oag_1", at(50)) }); err != nil {
			t.Fatal(err)
		}
		want["tok_r1"] = ""
		if diff := cmp.Diff(want, successors()); diff != "" {
			t.Fatalf("after forgetting those used before 50 s (-want +got):\n%s", diff)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.RevokeOAuthGrant(ctx, "oag_1", at(70)) }); err != nil {
			t.Fatal(err)
		}
		want["tok_r2"] = ""
		if diff := cmp.Diff(want, successors()); diff != "" {
			t.Fatalf("after revoking the grant (-want +got):\n%s", diff)
		}
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.RevokeAgentTokens(ctx, a.ID, at(80)) }); err != nil {
			t.Fatal(err)
		}
		g, err := db.OAuthGrant(ctx, "oag_2")
		if err != nil || !g.RevokedAt.Equal(at(80)) {
			t.Fatalf("the agent's other grant after archiving: %+v %v; want revoked", g, err)
		}
		if g, _ := db.OAuthGrant(ctx, "oag_1"); !g.RevokedAt.Equal(at(70)) {
			t.Errorf("a grant revoked before: revoked at %v; want it kept at 70 s", g.RevokedAt)
		}
	})
}
