package hub_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestTokenRequestRate: a token spends one request of its bucket per
// authentication; past the burst it is refused with rate_limited and the
// seconds until one is back, other tokens unaffected, and the bucket
// refills with time (§15).
func TestTokenRequestRate(t *testing.T) {
	s := hub.DefaultSettings()
	s.TokenRate, s.TokenBurst = 0.25, 2 // one request every 4 s, two at once
	w := newWorldWith(t, s)
	planner := w.Tokens["alice/planner"] // newWorld authenticated it once
	refused := func(wantSecs int) {
		t.Helper()
		_, err := w.Hub.Authenticate(ctx, planner)
		var e *hub.Error
		if !errors.As(err, &e) {
			t.Fatalf("err = %v, want rate_limited", err)
		}
		got := map[string]any{"code": e.WireCode(), "message": e.Msg, "details": e.Details}
		want := map[string]any{"code": "rate_limited", "details": map[string]any{"retry_after_s": wantSecs},
			"message": "this token is over its request rate of 0.25 a second (2 at once); try again in " + strconv.Itoa(wantSecs) + " s, and make fewer calls at once"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("refusal (-want +got):\n%s", diff)
		}
	}
	allowed := func(token string) {
		t.Helper()
		if _, err := w.Hub.Authenticate(ctx, token); err != nil {
			t.Fatalf("authenticate: %v", err)
		}
	}
	allowed(planner)
	refused(4)
	refused(4) // a refused request spends nothing
	allowed(w.Tokens["alice/reviewer"])
	w.Clock.Advance(3 * time.Second)
	refused(1)
	w.Clock.Advance(time.Second)
	allowed(planner)
	refused(4)

	// A person's API token has the same limit.
	_, secret, err := w.Hub.MintUserToken(ctx, "alice", "script", 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.Hub.AuthenticateUser(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Hub.AuthenticateUser(ctx, secret); code(err) != "rate_limited" {
		t.Fatalf("third request of a person's token: %v, want rate_limited", err)
	}
}

// TestTokenRequestBucketsPruned: buckets that are full again are dropped
// once a minute, so memory holds only tokens in recent use.
func TestTokenRequestBucketsPruned(t *testing.T) {
	w := newWorld(t)
	if got := hub.RequestBuckets(w.Hub); got != 3 { // planner, reviewer, helper
		t.Fatalf("buckets = %d, want 3", got)
	}
	w.Clock.Advance(time.Minute)
	if _, err := w.Hub.Authenticate(ctx, w.Tokens["bob/helper"]); err != nil {
		t.Fatal(err)
	}
	if got := hub.RequestBuckets(w.Hub); got != 1 {
		t.Fatalf("buckets after a minute idle = %d, want 1 (bob/helper's)", got)
	}
}

func TestTokenRateSettingChecked(t *testing.T) {
	for _, r := range []float64{0, -1} {
		s := hub.DefaultSettings()
		s.TokenRate = r
		if err := s.Validate(); err == nil {
			t.Errorf("token rate %v accepted", r)
		}
	}
	s := hub.DefaultSettings()
	s.TokenBurst = 0
	if err := s.Validate(); err == nil {
		t.Error("token burst 0 accepted")
	}
}
