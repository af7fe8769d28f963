package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

func TestAuthenticate(t *testing.T) {
	w := newWorld(t)
	good := w.Tokens["alice/planner"]
	lastChar := good[len(good)-1:]
	other := "A"
	if lastChar == "A" {
		other = "B"
	}
	badSum := good[:len(good)-1] + other

	revokedCaller := w.Agent(t, "alice/revoked")
	revoked := w.Tokens["alice/revoked"]
	if _, err := w.Hub.RevokeToken(t.Context(), revokedCaller.TokenID); err != nil {
		t.Fatal(err)
	}
	w.Agent(t, "alice/archived")
	archived := w.Tokens["alice/archived"]
	if _, err := w.Hub.ArchiveAgent(t.Context(), "alice/archived"); err != nil {
		t.Fatal(err)
	}
	_, expiring, err := w.Hub.MintToken(t.Context(), hub.TokenSpec{Owner: "alice", Agent: "planner", Expires: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Hub.Authenticate(t.Context(), expiring); err != nil {
		t.Fatalf("token within its lifetime: %v", err)
	}
	w.Clock.Advance(time.Hour)

	for _, tc := range []struct {
		name, token, want string
	}{
		{"missing", "", "no bearer token"},
		{"wrong prefix", "xyz_" + good[4:], "malformed"},
		{"cut short", good[:30], "malformed"},
		{"bad checksum", badSum, "checksum does not match"},
		{"unknown", hub.NewTokenForTest(), "not known"},
		{"revoked", revoked, "revoked"},
		{"expired", expiring, "expired"},
		{"archived agent", archived, "archived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.Hub.Authenticate(t.Context(), tc.token)
			if code(err) != "unauthenticated" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want unauthenticated saying %q", err, tc.want)
			}
		})
	}
	c, err := w.Hub.Authenticate(t.Context(), good)
	if err != nil || c.Agent.Handle() != "alice/planner" {
		t.Fatalf("good token: caller %v, err %v", c, err)
	}
}

func TestTokenFormat(t *testing.T) {
	w := newWorld(t)
	secret := w.Tokens["alice/planner"]
	if !strings.HasPrefix(secret, "plv_") || len(secret) != 4+43+6 {
		t.Fatalf("token %q: want plv_ + 43 base62 + 6 checksum characters", secret)
	}
	if strings.Trim(secret[4:], "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		t.Fatalf("token %q has characters outside base62", secret)
	}
}

func TestScopes(t *testing.T) {
	got, err := hub.ParseScopes("msg:write, msg:read,msg:read")
	if err != nil || strings.Join(got, ",") != "msg:read,msg:write" {
		t.Fatalf("ParseScopes = %v, %v", got, err)
	}
	if _, err := hub.ParseScopes("msg:admin"); code(err) != "invalid_argument" {
		t.Fatalf("unknown scope: err = %v", err)
	}
	w := newWorld(t)
	reader := w.Agent(t, "alice/reader", hub.ScopeRead)
	err = reader.Require(hub.ScopeWrite)
	if code(err) != "missing_scope" || !strings.Contains(err.Error(), "msg:write") {
		t.Fatalf("Require(msg:write) with a read-only token: %v", err)
	}
	if err := reader.Require(hub.ScopeRead); err != nil {
		t.Fatalf("Require(msg:read): %v", err)
	}
}

// TestTokenLifetimeCap: every token, an agent's or a person's, lives at
// most MaxTokenLifetime whichever face mints it; a count of days too big for
// a duration is refused the same way, never wrapped around.
func TestTokenLifetimeCap(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		expires time.Duration
		ok      bool
	}{
		{0, true},
		{hub.Days(3650), true},
		{hub.Days(3651), false},
		{hub.Days(1 << 60), false},
		{-time.Hour, false},
	} {
		_, _, err := w.Hub.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: "planner", Expires: tc.expires})
		_, _, uerr := w.Hub.MintUserToken(ctx, "alice", "", tc.expires)
		want := ""
		if !tc.ok {
			want = "invalid_argument"
		}
		if code(err) != want || code(uerr) != want {
			t.Errorf("expires %v: agent token %v, person's token %v; want %q", tc.expires, err, uerr, want)
		}
	}
}
