package store_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/store"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// webhookAgent makes alice/planner with the endpoints named, and returns
// the agent.
func webhookAgent(t *testing.T, db *store.DB, hooks ...string) *hub.Agent {
	t.Helper()
	u := insertUser(t, db, "alice")
	a := &hub.Agent{ID: "agt_planner", OwnerID: u.ID, OwnerHandle: u.Handle, Slug: "planner", Mode: hub.ModeActive, CreatedAt: time.UnixMilli(1000).UTC()}
	err := db.Update(ctx, func(tx hub.Tx) error {
		if err := tx.InsertAgent(ctx, a); err != nil {
			return err
		}
		for i, id := range hooks {
			w := &hub.Webhook{ID: id, AgentID: a.ID, URL: "https://example.com/" + id, CreatedAt: time.UnixMilli(int64(2000 + i)).UTC()}
			if err := tx.InsertWebhook(ctx, w, "whsec_"+id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func calls(n int, webhookID string, at time.Time) []*hub.WebhookCall {
	var out []*hub.WebhookCall
	for i := range n {
		out = append(out, &hub.WebhookCall{ID: fmt.Sprintf("whc_%s_%02d", webhookID, i), WebhookID: webhookID, EventID: int64(i + 1),
			Type: hub.EventMessageNew, Payload: []byte(`{"n":` + fmt.Sprint(i) + `}`), CreatedAt: at, DueAt: at})
	}
	return out
}

func ids(cs []*hub.WebhookCall) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestWebhookOutbox: the endpoints with calls due are listed, the one
// waiting longest first; an endpoint's calls are claimed when due, with
// where they go and how they are signed; a claim holds them for its lease
// and they come back when it lapses; a delivered one leaves, a failed one
// waits for its next time; disabling an endpoint drops its calls and
// removing it drops everything of it; the log keeps the latest attempts.
func TestWebhookOutbox(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		a := webhookAgent(t, db, "wh_one", "wh_two")
		t0 := time.UnixMilli(1_000_000).UTC()
		claim := func(webhookID string, now, until time.Time, limit int) []*hub.WebhookCall {
			t.Helper()
			var got []*hub.WebhookCall
			if err := db.Update(ctx, func(tx hub.Tx) error {
				var err error
				got, err = tx.ClaimWebhookCalls(ctx, webhookID, now, until, limit)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return got
		}
		update := func(fn func(tx hub.Tx) error) {
			t.Helper()
			if err := db.Update(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		later := calls(1, "wh_two", t0.Add(10*time.Second))
		update(func(tx hub.Tx) error { return tx.InsertWebhookCalls(ctx, append(calls(2, "wh_one", t0), later...)) })

		ws, err := db.Webhooks(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []*hub.Webhook{
			{ID: "wh_one", AgentID: a.ID, AgentHandle: "alice/planner", URL: "https://example.com/wh_one", CreatedAt: time.UnixMilli(2000).UTC(), Pending: 2},
			{ID: "wh_two", AgentID: a.ID, AgentHandle: "alice/planner", URL: "https://example.com/wh_two", CreatedAt: time.UnixMilli(2001).UTC(), Pending: 1},
		}
		if diff := cmp.Diff(want, ws); diff != "" {
			t.Errorf("the agent's webhooks (-want +got):\n%s", diff)
		}
		due := func(now time.Time) []string {
			t.Helper()
			ids, err := db.DueWebhooks(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		if got := due(t0.Add(-time.Millisecond)); len(got) != 0 {
			t.Errorf("due before any call is: %v", got)
		}
		if got := due(t0); !slices.Equal(got, []string{"wh_one"}) {
			t.Errorf("due at t0: %v; want wh_one", got)
		}
		if got := due(t0.Add(10 * time.Second)); !slices.Equal(got, []string{"wh_one", "wh_two"}) {
			t.Errorf("due at t0+10s: %v; want wh_one (waiting since t0) before wh_two", got)
		}

		lease := t0.Add(2 * time.Minute)
		if got := claim("wh_two", t0, lease, 10); len(got) != 0 {
			t.Errorf("claimed %v of wh_two at t0, before its call is due", ids(got))
		}
		got := claim("wh_one", t0, lease, 10)
		if diff := cmp.Diff([]string{"whc_wh_one_00", "whc_wh_one_01"}, ids(got)); diff != "" {
			t.Fatalf("claimed at t0 (-want +got):\n%s", diff)
		}
		c := got[0]
		if c.URL != "https://example.com/wh_one" || c.Secret != "whsec_wh_one" || c.AgentID != a.ID || c.AgentHandle != "alice/planner" ||
			c.OwnerID != "usr_alice" || string(c.Payload) != `{"n":0}` || !c.CreatedAt.Equal(t0) || !c.DueAt.Equal(lease) {
			t.Errorf("a claimed call: %+v", c)
		}
		if got := due(t0.Add(10 * time.Second)); !slices.Equal(got, []string{"wh_two"}) {
			t.Errorf("due at t0+10s with wh_one's calls claimed: %v; want wh_two", got)
		}
		if got := claim("wh_one", t0.Add(10*time.Second), lease, 10); len(got) != 0 {
			t.Errorf("at t0+10s, claimed %v of wh_one; its calls are held", ids(got))
		}
		if got := claim("wh_two", t0.Add(10*time.Second), lease, 10); !slices.Equal(ids(got), []string{"whc_wh_two_00"}) {
			t.Errorf("at t0+10s, claimed %v of wh_two; want its call, due then", ids(got))
		}
		if got := claim("wh_one", lease, lease.Add(2*time.Minute), 1); !slices.Equal(ids(got), []string{"whc_wh_one_00"}) {
			t.Errorf("once the lease lapsed, claimed %v with limit 1; want the oldest again", ids(got))
		}

		// One delivered, one to be retried in an hour.
		retry := *got[0]
		retry.Attempts, retry.DueAt = 1, t0.Add(time.Hour)
		update(func(tx hub.Tx) error {
			if err := tx.DeleteWebhookCall(ctx, "whc_wh_one_01"); err != nil {
				return err
			}
			return tx.RescheduleWebhookCall(ctx, &retry)
		})
		if got := claim("wh_one", t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), 10); len(got) != 1 || got[0].ID != "whc_wh_one_00" || got[0].Attempts != 1 {
			t.Errorf("at t0+1h claimed %v; want the retried call (1 attempt)", ids(got))
		}

		// Disabled: its calls are dropped, and it says why.
		off := t0.Add(2 * time.Hour)
		update(func(tx hub.Tx) error { return tx.SetWebhookDisabled(ctx, "wh_two", off, "failed for 24 hours") })
		w, err := db.Webhook(ctx, "wh_two")
		if err != nil || !w.DisabledAt.Equal(off) || w.DisabledReason != "failed for 24 hours" || w.Pending != 0 || w.Enabled() {
			t.Errorf("the disabled webhook: %+v, %v", w, err)
		}
		update(func(tx hub.Tx) error { return tx.InsertWebhookCalls(ctx, calls(1, "wh_two", off)) })
		if got := due(off.Add(time.Hour)); !slices.Equal(got, []string{"wh_one"}) {
			t.Errorf("due with wh_two disabled: %v; want only wh_one", got)
		}
		if got := claim("wh_two", off.Add(time.Hour), off.Add(2*time.Hour), 10); len(got) != 0 {
			t.Errorf("claimed %v; a disabled endpoint's calls are never claimed", ids(got))
		}
		update(func(tx hub.Tx) error { return tx.SetWebhookDisabled(ctx, "wh_two", time.Time{}, "") })
		if w, _ := db.Webhook(ctx, "wh_two"); !w.Enabled() || w.DisabledReason != "" || w.Pending != 1 {
			t.Errorf("enabled again: %+v", w)
		}

		// The log keeps the latest WebhookLog attempts, newest first.
		update(func(tx hub.Tx) error {
			for i := range 25 {
				a := &hub.WebhookAttempt{ID: fmt.Sprintf("wha_%02d", i), WebhookID: "wh_one", CallID: "whc_wh_one_00", Type: hub.EventMessageNew,
					At: t0.Add(time.Duration(i) * time.Second), Status: 500, Duration: 12 * time.Millisecond}
				if i == 24 {
					a.Status, a.Error = 0, "connection refused"
				}
				if err := tx.InsertWebhookAttempt(ctx, a, 20); err != nil {
					return err
				}
			}
			return tx.InsertWebhookAttempt(ctx, &hub.WebhookAttempt{ID: "wha_gone", WebhookID: "wh_none", At: t0}, 20)
		})
		log, err := db.WebhookAttempts(ctx, "wh_one", 100)
		if err != nil || len(log) != 20 || log[0].ID != "wha_24" || log[19].ID != "wha_05" {
			t.Fatalf("the log: %d attempts from %v to %v, %v; want 20, wha_24 first", len(log), log[0].ID, log[len(log)-1].ID, err)
		}
		if diff := cmp.Diff(hub.WebhookAttempt{ID: "wha_24", WebhookID: "wh_one", CallID: "whc_wh_one_00", Type: hub.EventMessageNew,
			At: t0.Add(24 * time.Second), Error: "connection refused", Duration: 12 * time.Millisecond}, log[0]); diff != "" {
			t.Errorf("the newest attempt (-want +got):\n%s", diff)
		}

		// Removed: nothing of it is left.
		update(func(tx hub.Tx) error { return tx.DeleteWebhook(ctx, "wh_one") })
		if ws, _ := db.Webhooks(ctx, a.ID); len(ws) != 1 || ws[0].ID != "wh_two" {
			t.Errorf("after removing wh_one: %v", ws)
		}
		if log, _ := db.WebhookAttempts(ctx, "wh_one", 100); len(log) != 0 {
			t.Errorf("a removed webhook's log: %v", log)
		}
		if got := due(off.Add(10 * time.Hour)); !slices.Equal(got, []string{"wh_two"}) {
			t.Errorf("after removing wh_one, due: %v", got)
		}
		if got := claim("wh_two", off.Add(10*time.Hour), off.Add(11*time.Hour), 10); !slices.Equal(ids(got), []string{"whc_wh_two_00"}) {
			t.Errorf("after removing wh_one, claimed %v", ids(got))
		}
	})
}

// TestWebhookClaimsDoNotOverlap: claims made at once share out the due
// calls — on PostgreSQL by skipping the rows another claim holds — so no
// call is sent by two replicas.
func TestWebhookClaimsDoNotOverlap(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *store.DB) {
		webhookAgent(t, db, "wh_one")
		t0 := time.UnixMilli(1_000_000).UTC()
		if err := db.Update(ctx, func(tx hub.Tx) error { return tx.InsertWebhookCalls(ctx, calls(40, "wh_one", t0)) }); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				var got []*hub.WebhookCall
				err := db.Update(ctx, func(tx hub.Tx) error {
					var err error
					got, err = tx.ClaimWebhookCalls(ctx, "wh_one", t0, t0.Add(time.Minute), 5)
					return err
				})
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, c := range got {
					seen[c.ID]++
				}
			})
		}
		wg.Wait()
		// Whatever a claim passed over is still there for the next.
		if err := db.Update(ctx, func(tx hub.Tx) error {
			rest, err := tx.ClaimWebhookCalls(ctx, "wh_one", t0, t0.Add(time.Minute), 100)
			for _, c := range rest {
				seen[c.ID]++
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s was claimed %d times", id, n)
			}
		}
		if len(seen) != 40 {
			t.Errorf("the claims took %d of 40 calls", len(seen))
		}
	})
}
