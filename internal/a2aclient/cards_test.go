package a2aclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
)

// TestRemoteCardRefreshedDaily (§18): a remote agent's card is read again
// once it is a day old, and what it now says — name, description, skills —
// is what its owner sees and its agent's description; a card that cannot
// be read then is kept as it was and tried again at the next sweep; a
// removed remote is not read again.
func TestRemoteCardRefreshedDaily(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	w := remoteWorld(t, f)
	added := addRemote(t, w, "echo", f)
	refresh := func(want int) {
		t.Helper()
		n, err := w.remotes.RefreshCards(ctx)
		if err != nil || n != want {
			t.Fatalf("RefreshCards = %d, %v; want %d", n, err, want)
		}
	}
	listed := func() *hub.RemoteAgent {
		t.Helper()
		rs, err := w.remotes.List(ctx, w.Person(t, "alice"))
		if err != nil || len(rs) != 1 {
			t.Fatalf("List = %v, %v", rs, err)
		}
		return rs[0]
	}

	f.set(func(f *fakeRemote) { f.name = "Echo Two" })
	w.Clock.Advance(a2aclient.CardAge - time.Millisecond)
	refresh(0)
	if r := listed(); r.Name != "Echo" || !r.FetchedAt.Equal(added.FetchedAt) {
		t.Fatalf("a card younger than a day was read again: %+v", r)
	}

	f.set(func(f *fakeRemote) { f.down = true })
	w.Clock.Advance(2 * time.Millisecond)
	refresh(0)
	if r := listed(); r.Name != "Echo" || r.Description != "Echo says it back" || !r.FetchedAt.Equal(added.FetchedAt) {
		t.Fatalf("a card that could not be read was not kept as it was: %+v", r)
	}

	f.set(func(f *fakeRemote) { f.down = false })
	w.Clock.Advance(time.Hour)
	refresh(1)
	r := listed()
	if r.Name != "Echo Two" || r.Description != "Echo Two says it back" || strings.Join(r.Skills, ",") != "echo" || !r.FetchedAt.Equal(w.Clock.Now()) ||
		r.CardURL != added.CardURL || !r.HasCredential {
		t.Fatalf("after a day, the card listed is %+v", r)
	}
	if f.auth != "Bearer s3cret" {
		t.Errorf("the card was read again with Authorization %q; want the credential", f.auth)
	}
	as, err := w.Hub.Agents(ctx, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Handle() == "alice/echo" && a.Description != "Echo Two says it back" {
			t.Errorf("the agent's description is %q; want the card's new one", a.Description)
		}
	}
	refresh(0)

	if err := w.remotes.Remove(ctx, w.Person(t, "alice"), "echo"); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(2 * a2aclient.CardAge)
	refresh(0)
}
