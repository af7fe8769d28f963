package hub_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/overview"
)

// permissionAsk is the request Claude Code relays in these tests.
var permissionAsk = hub.PermissionInput{RequestID: "tbxkq", ToolName: "Bash", Description: "List the files",
	InputPreview: `{"command":"ls -la"}`, Instance: "desk"}

// eventsFor is what the session's wait hands over after cursor, with how
// each stands for the session.
func eventsFor(t *testing.T, w *world, c *hub.Caller, cursor *string, instance string) *hub.WaitResult {
	t.Helper()
	r, err := w.hub.Wait(ctx, c, hub.WaitInput{Cursor: cursor, Instance: instance})
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
	alice, bob := w.owner(t), w.person(t, "bob")
	end := parkWait(t, w, w.planner, "desk") // the channel's wait
	defer end()
	ownerCursor, _ := w.hub.LatestCursor(ctx, alice.ID)
	agentCursor := w.latest(t, w.planner)

	p, err := w.hub.RequestPermission(ctx, w.planner, permissionAsk)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != hub.PermissionPending || p.AgentHandle != "alice/planner" || p.Instance != "desk" {
		t.Fatalf("the request: %+v", p)
	}
	again, err := w.hub.RequestPermission(ctx, w.planner, permissionAsk)
	if err != nil || again.ID != p.ID {
		t.Fatalf("the same request again: %+v, %v; want %s", again, err, p.ID)
	}
	as, err := w.hub.Approvals(ctx, alice)
	if err != nil || len(as) != 1 || as[0].Kind != hub.ApprovalPermission || as[0].ID != p.ID || as[0].Permission.ToolName != "Bash" {
		t.Fatalf("alice's approvals: %+v, %v; want the one permission request", as, err)
	}
	b, err := w.bridge(alice)
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
		if _, err := w.hub.Decide(ctx, tc.who, p.ID, tc.v); code(err) != tc.want {
			t.Errorf("%s deciding: %v, want %s", tc.name, err, tc.want)
		}
	}
	d, err := w.hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictApprove})
	if err != nil || d.Permission.Status != hub.PermissionAllowed || d.Permission.DecidedBy != alice.ID || d.Permission.Behavior() != hub.BehaviorAllow {
		t.Fatalf("alice allowing: %+v, %v", d, err)
	}
	if _, err := w.hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictReject}); code(err) != "conflict" {
		t.Errorf("deciding again: %v, want conflict", err)
	}
	if as, _ := w.hub.Approvals(ctx, alice); len(as) != 0 {
		t.Errorf("alice's approvals after deciding: %+v", as)
	}

	for _, session := range []struct {
		name   string
		forYou bool
	}{{"desk", true}, {"phone", false}} {
		r := eventsFor(t, w, w.planner, agentCursor, session.name)
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
	r, err := w.hub.WaitPerson(ctx, alice, ownerCursor, 0)
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
		in   hub.PermissionInput
	}{
		{"a request_id of six letters", hub.PermissionInput{RequestID: "abcdef", ToolName: "Bash"}},
		{"a request_id with a digit", hub.PermissionInput{RequestID: "abc1e", ToolName: "Bash"}},
		{"no tool_name", hub.PermissionInput{RequestID: "abcde"}},
		{"a blank tool_name", hub.PermissionInput{RequestID: "abcde", ToolName: " \u200b "}},
		{"a bad session name", hub.PermissionInput{RequestID: "abcde", ToolName: "Bash", Instance: "no/slash"}},
	} {
		if _, err := w.hub.RequestPermission(ctx, w.planner, tc.in); code(err) != "invalid_argument" {
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
	alice := w.owner(t)
	t.Run("expired", func(t *testing.T) {
		end := parkWait(t, w, w.planner, "desk")
		defer end()
		p, err := w.hub.RequestPermission(ctx, w.planner, permissionAsk)
		if err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(hub.DefaultPermissionTTL - time.Second)
		if as, _ := w.hub.Approvals(ctx, alice); len(as) != 1 {
			t.Fatalf("a second before its expiry: %d approvals, want 1", len(as))
		}
		w.clock.Advance(time.Second)
		if as, _ := w.hub.Approvals(ctx, alice); len(as) != 0 {
			t.Errorf("at its expiry: approvals %+v, want none", as)
		}
		ended, err := w.hub.EndedPermissions(ctx, alice)
		if err != nil || len(ended) != 1 || ended[0].ID != p.ID || ended[0].Status != hub.PermissionExpired ||
			!ended[0].DecidedAt.Equal(p.CreatedAt.Add(hub.DefaultPermissionTTL)) {
			t.Fatalf("ended requests: %+v, %v; want it expired at %v", ended, err, p.CreatedAt.Add(hub.DefaultPermissionTTL))
		}
		if _, err := w.hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictApprove}); code(err) != "permission_expired" {
			t.Errorf("allowing it: %v, want permission_expired", err)
		}
	})
	t.Run("withdrawn", func(t *testing.T) {
		w.clock.Advance(time.Hour + time.Minute) // the expired one is no longer shown
		end := parkWait(t, w, w.planner, "desk")
		p, err := w.hub.RequestPermission(ctx, w.planner, permissionAsk)
		if err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(10 * time.Second)
		end() // the channel went away
		gone := p.CreatedAt.Add(10 * time.Second)
		w.clock.Advance(time.Minute - time.Second)
		if as, _ := w.hub.Approvals(ctx, alice); len(as) != 1 {
			t.Fatalf("59 s after its session's last wait: %d approvals, want 1", len(as))
		}
		w.clock.Advance(2 * time.Second)
		// Deciding finds it withdrawn, and records it so.
		if _, err := w.hub.Decide(ctx, alice, p.ID, hub.Verdict{Action: hub.VerdictReject}); code(err) != "permission_withdrawn" {
			t.Errorf("denying it: %v, want permission_withdrawn", err)
		}
		ended, err := w.hub.EndedPermissions(ctx, alice)
		if err != nil || len(ended) != 1 || ended[0].Status != hub.PermissionWithdrawn || !ended[0].DecidedAt.Equal(gone.Add(time.Minute)) {
			t.Fatalf("ended requests: %+v, %v; want it withdrawn at %v", ended, err, gone.Add(time.Minute))
		}
	})
	t.Run("no session ever listened", func(t *testing.T) {
		p, err := w.hub.RequestPermission(ctx, w.planner, hub.PermissionInput{RequestID: "qwert", ToolName: "Write"})
		if err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(time.Minute + time.Millisecond)
		if as, _ := w.hub.Approvals(ctx, alice); len(as) != 0 {
			t.Errorf("a minute after a request no wait listens for: %+v, want none", as)
		}
		got, _ := w.hub.EndedPermissions(ctx, alice)
		if len(got) == 0 || got[0].ID != p.ID || got[0].Status != hub.PermissionWithdrawn {
			t.Errorf("ended: %+v, want %s withdrawn first", got, p.ID)
		}
	})
}
