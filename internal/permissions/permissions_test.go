package permissions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/permissions"
)

var ctx = context.Background()

// world is the Desk over a hubtest world, registered with its hub as a
// server registers it.
type world struct {
	*hubtest.World
	desk *permissions.Desk
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := hubtest.Open(t, hub.DefaultSettings())
	d := permissions.New(w.Hub, w.Store)
	w.Hub.KeepPermissions(d)
	return &world{World: w, desk: d}
}

// permissionAsk is the request Claude Code relays in these tests.
var permissionAsk = permissions.Input{RequestID: "tbxkq", ToolName: "Bash", Description: "List the files",
	InputPreview: `{"command":"ls -la"}`, Instance: "desk"}

// eventsFor is what the session's wait hands over after cursor, with how
// each stands for the session.
func (w *world) eventsFor(t *testing.T, c *hub.Caller, cursor *string, instance string) *hub.WaitResult {
	t.Helper()
	r, err := w.Hub.Wait(ctx, c, hub.WaitInput{Cursor: cursor, Instance: instance})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPermissionRelay (§19): a session's permission request is an owner
// approval of kind permission, on the Bridge and under Approvals; a retry
// with the same request_id is the same request; only the owner decides;
// the verdict reaches the session that asked as permission.decided (for
// it alone), recorded with who decided; a second decision is refused.
func TestPermissionRelay(t *testing.T) {
	w := newWorld(t)
	alice, bob := w.Person(t, "alice"), w.Person(t, "bob")
	end := w.ParkWait(t, w.Planner, "desk") // the channel's wait
	defer end()
	ownerCursor, _ := w.Hub.LatestCursor(ctx, alice.ID)
	agentCursor := w.Latest(t, w.Planner)

	p, err := w.desk.Request(ctx, w.Planner, permissionAsk)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != hub.PermissionPending || p.AgentHandle != "alice/planner" || p.Instance != "desk" {
		t.Fatalf("the request: %+v", p)
	}
	again, err := w.desk.Request(ctx, w.Planner, permissionAsk)
	if err != nil || again.ID != p.ID {
		t.Fatalf("the same request again: %+v, %v; want %s", again, err, p.ID)
	}
	as, err := w.Hub.Approvals(ctx, alice)
	if err != nil || len(as) != 1 || as[0].Kind != hub.ApprovalPermission || as[0].ID != p.ID || as[0].Permission.ToolName != "Bash" {
		t.Fatalf("alice's approvals: %+v, %v; want the one permission request", as, err)
	}
	b, err := overview.New(w.Hub, w.Store).Bridge(ctx, alice)
	if err != nil || len(b.Activity) == 0 || b.Activity[0].Kind != overview.ActivityPermission || b.Activity[0].PermissionID != p.ID ||
		b.Activity[0].Text != "Bash: List the files" || b.Activity[0].Instance != "desk" {
		t.Fatalf("the Bridge's activity: %+v, %v", b.Activity, err)
	}

	for _, tc := range []struct {
		name string
		who  *hub.User
		v    hub.Verdict
		want string
	}{
		{"bob, not the owner", bob, hub.Verdict{Action: hub.VerdictApprove}, "not_found"},
		{"an answer", alice, hub.Verdict{Action: hub.VerdictAnswer, Answer: "yes"}, "invalid_argument"},
	} {
		if _, err := w.Hub.Decide(ctx, tc.who, p.ID, tc.v); hubtest.Code(err) != tc.want {
			t.Errorf("%s deciding: %v, want %s", tc.name, err, tc.want)
		}
	}
	d, err := w.Hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictApprove})
	if err != nil || d.Permission.Status != hub.PermissionAllowed || d.Permission.DecidedBy != alice.ID || d.Permission.Behavior() != hub.BehaviorAllow {
		t.Fatalf("alice allowing: %+v, %v", d, err)
	}
	if _, err := w.Hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictReject}); hubtest.Code(err) != "conflict" {
		t.Errorf("deciding again: %v, want conflict", err)
	}
	if as, _ := w.Hub.Approvals(ctx, alice); len(as) != 0 {
		t.Errorf("alice's approvals after deciding: %+v", as)
	}

	for _, session := range []struct {
		name   string
		forYou bool
	}{{"desk", true}, {"phone", false}} {
		r := w.eventsFor(t, w.Planner, agentCursor, session.name)
		var got []string
		for _, e := range r.Events {
			if e.Type == hub.EventPermissionDecided {
				var data map[string]any
				json.Unmarshal(e.Data, &data)
				got = append(got, data["request_id"].(string)+" "+data["behavior"].(string)+" by "+data["by"].(string))
				if r.Addressing[e.ID].ForYou != session.forYou {
					t.Errorf("the verdict for session %s: for_you %v, want %v", session.name, r.Addressing[e.ID].ForYou, session.forYou)
				}
			}
		}
		if diff := cmp.Diff([]string{"tbxkq allow by alice"}, got); diff != "" {
			t.Errorf("session %s's verdicts (-want +got):\n%s", session.name, diff)
		}
	}
	r, err := w.Hub.WaitPerson(ctx, alice, ownerCursor, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range r.Events {
		types = append(types, e.Type)
	}
	if diff := cmp.Diff([]string{hub.EventPermissionRequest, hub.EventApprovalDecided}, types); diff != "" {
		t.Errorf("alice's events (-want +got):\n%s", diff)
	}
}

// TestPermissionRequestRefusals: what Claude Code gives is checked.
func TestPermissionRequestRefusals(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		name string
		in   permissions.Input
	}{
		{"a request_id of six letters", permissions.Input{RequestID: "abcdef", ToolName: "Bash"}},
		{"a request_id with a digit", permissions.Input{RequestID: "abc1e", ToolName: "Bash"}},
		{"no tool_name", permissions.Input{RequestID: "abcde"}},
		{"a blank tool_name", permissions.Input{RequestID: "abcde", ToolName: " \u200b "}},
		{"a bad session name", permissions.Input{RequestID: "abcde", ToolName: "Bash", Instance: "no/slash"}},
	} {
		if _, err := w.desk.Request(ctx, w.Planner, tc.in); hubtest.Code(err) != "invalid_argument" {
			t.Errorf("%s: %v, want invalid_argument", tc.name, err)
		}
	}
}

// TestPermissionExpiresAndIsWithdrawn (§19): a request nobody decided for
// PermissionTTL expires — it leaves Approvals, is listed as expired at
// its expiry, and can no longer be decided; one whose session has had no
// wait parked for a minute (its channel went away) is withdrawn, counted
// from the end of its last wait.
func TestPermissionExpiresAndIsWithdrawn(t *testing.T) {
	w := newWorld(t)
	alice := w.Person(t, "alice")
	t.Run("expired", func(t *testing.T) {
		end := w.ParkWait(t, w.Planner, "desk")
		defer end()
		p, err := w.desk.Request(ctx, w.Planner, permissionAsk)
		if err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(hub.DefaultPermissionTTL - time.Second)
		if as, _ := w.Hub.Approvals(ctx, alice); len(as) != 1 {
			t.Fatalf("a second before its expiry: %d approvals, want 1", len(as))
		}
		w.Clock.Advance(time.Second)
		if as, _ := w.Hub.Approvals(ctx, alice); len(as) != 0 {
			t.Errorf("at its expiry: approvals %+v, want none", as)
		}
		ended, err := w.desk.Ended(ctx, alice)
		if err != nil || len(ended) != 1 || ended[0].ID != p.ID || ended[0].Status != hub.PermissionExpired ||
			!ended[0].DecidedAt.Equal(p.CreatedAt.Add(hub.DefaultPermissionTTL)) {
			t.Fatalf("ended requests: %+v, %v; want it expired at %v", ended, err, p.CreatedAt.Add(hub.DefaultPermissionTTL))
		}
		if _, err := w.Hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictApprove}); hubtest.Code(err) != "permission_expired" {
			t.Errorf("allowing it: %v, want permission_expired", err)
		}
	})
	t.Run("withdrawn", func(t *testing.T) {
		w.Clock.Advance(time.Hour + time.Minute) // the expired one is no longer shown
		end := w.ParkWait(t, w.Planner, "desk")
		p, err := w.desk.Request(ctx, w.Planner, permissionAsk)
		if err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(10 * time.Second)
		end() // the channel went away
		gone := p.CreatedAt.Add(10 * time.Second)
		w.Clock.Advance(time.Minute - time.Second)
		if as, _ := w.Hub.Approvals(ctx, alice); len(as) != 1 {
			t.Fatalf("59 s after its session's last wait: %d approvals, want 1", len(as))
		}
		w.Clock.Advance(2 * time.Second)
		// Deciding finds it withdrawn, and records it so.
		if _, err := w.Hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictReject}); hubtest.Code(err) != "permission_withdrawn" {
			t.Errorf("denying it: %v, want permission_withdrawn", err)
		}
		ended, err := w.desk.Ended(ctx, alice)
		if err != nil || len(ended) != 1 || ended[0].Status != hub.PermissionWithdrawn || !ended[0].DecidedAt.Equal(gone.Add(time.Minute)) {
			t.Fatalf("ended requests: %+v, %v; want it withdrawn at %v", ended, err, gone.Add(time.Minute))
		}
	})
	t.Run("no session ever listened", func(t *testing.T) {
		p, err := w.desk.Request(ctx, w.Planner, permissions.Input{RequestID: "qwert", ToolName: "Write"})
		if err != nil {
			t.Fatal(err)
		}
		w.Clock.Advance(time.Minute + time.Millisecond)
		if as, _ := w.Hub.Approvals(ctx, alice); len(as) != 0 {
			t.Errorf("a minute after a request no wait listens for: %+v, want none", as)
		}
		got, _ := w.desk.Ended(ctx, alice)
		if len(got) == 0 || got[0].ID != p.ID || got[0].Status != hub.PermissionWithdrawn {
			t.Errorf("ended: %+v, want %s withdrawn first", got, p.ID)
		}
	})
}
