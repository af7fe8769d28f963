package accounts_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/accounts"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

var ctx = context.Background()

var code = hubtest.Code

// emptyHub is a hub on a new store with nobody in it yet, and its
// accounts.
func emptyHub(t *testing.T) (*hub.Hub, *accounts.Accounts, *hubtest.Clock) {
	t.Helper()
	c := hubtest.NewClock(hubtest.Start)
	db := storetest.Open(t)
	log := slog.New(slog.DiscardHandler)
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Clock: c, Logger: log, Settings: hub.DefaultSettings()})
	if err != nil {
		t.Fatal(err)
	}
	return h, accounts.New(h, db, log), c
}

// TestSetupMakesTheOneAdmin: first-run setup makes the admin; once anyone
// exists it is refused and changes nothing; people made later are not
// admins. Setups racing each other make one account.
func TestSetupMakesTheOneAdmin(t *testing.T) {
	h, a, _ := emptyHub(t)
	if need, err := a.NeedsSetup(ctx); err != nil || !need {
		t.Fatalf("a new server needs setup: %v, %v", need, err)
	}
	if _, _, err := a.Setup(ctx, "alice", "Alice", "short"); code(err) != "weak_password" {
		t.Fatalf("a short password: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, _, errs[i] = a.Setup(ctx, fmt.Sprintf("first%d", i), "", "correct horse battery") })
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		if err == nil {
			made++
		} else if code(err) != "set_up" {
			t.Fatalf("a setup that lost the race: %v, want set_up", err)
		}
	}
	us, err := h.Users(ctx, nil)
	if err != nil || made != 1 || len(us) != 1 || !us[0].Admin {
		t.Fatalf("racing setups made %d, people %+v (%v); want one admin", made, us, err)
	}
	if _, _, err := a.Setup(ctx, "mallory", "", "correct horse battery"); code(err) != "set_up" {
		t.Fatalf("setup once set up: %v", err)
	}
	bob, err := h.CreateUser(ctx, "bob", "")
	if err != nil || bob.Admin {
		t.Fatalf("a second person: %+v, %v; want no admin", bob, err)
	}
	if us, _ := h.Users(ctx, nil); len(us) != 2 {
		t.Fatalf("people: %+v, want the admin and bob", us)
	}
}

// TestSignUpByInvitation: invitation only by default; an invitation works
// once and not after it expires; open sign-up needs none; only the admin
// changes the mode or invites.
func TestSignUpByInvitation(t *testing.T) {
	_, a, c := emptyHub(t)
	admin, _, err := a.Setup(ctx, "alice", "", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.SignUp(ctx, "bob", "", "correct horse battery", "", "10.0.0.1"); code(err) != "invite_only" {
		t.Fatalf("sign-up without an invitation: %v", err)
	}
	_, link, err := a.CreateInvite(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.SignUp(ctx, "bob", "", "short", link, "10.0.0.1"); code(err) != "weak_password" {
		t.Fatalf("a weak password with an invitation: %v", err)
	}
	if _, _, err := a.SignUp(ctx, "alice", "", "correct horse battery", link, "10.0.0.1"); err == nil {
		t.Fatal("a taken handle was given out")
	}
	bob, signedIn, err := a.SignUp(ctx, "bob", "", "correct horse battery", link, "10.0.0.1")
	if err != nil || bob.Admin {
		t.Fatalf("sign-up with an invitation: %+v, %v", bob, err)
	}
	if u, err := a.SignedIn(ctx, signedIn); err != nil || u.ID != bob.ID {
		t.Fatalf("signed in by signing up: %+v, %v", u, err)
	}
	if _, _, err := a.SignUp(ctx, "carol", "", "correct horse battery", link, "10.0.0.1"); code(err) != "bad_invite" {
		t.Fatalf("an invitation used twice: %v", err)
	}
	if _, _, err := a.CreateInvite(ctx, bob); code(err) != "forbidden" {
		t.Fatalf("a person who is not the admin invites: %v", err)
	}
	_, late, err := a.CreateInvite(ctx, nil) // the command line
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(accounts.InviteLifetime)
	if _, _, err := a.SignUp(ctx, "carol", "", "correct horse battery", late, "10.0.0.1"); code(err) != "bad_invite" {
		t.Fatalf("an expired invitation: %v", err)
	}
	if err := a.SetSignupMode(ctx, bob, accounts.SignupOpen); code(err) != "forbidden" {
		t.Fatalf("bob opens sign-up: %v", err)
	}
	if err := a.SetSignupMode(ctx, admin, "everyone"); code(err) != "invalid_argument" {
		t.Fatalf("an unknown mode: %v", err)
	}
	if err := a.SetSignupMode(ctx, admin, accounts.SignupOpen); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.SignUp(ctx, "carol", "", "correct horse battery", "", "10.0.0.1"); err != nil {
		t.Fatalf("open sign-up: %v", err)
	}
	// One address makes five accounts a minute; refused attempts do not
	// count.
	for i := range 5 {
		a.SignUp(ctx, "carol", "", "correct horse battery", "", "10.0.5.1") // taken: refused
		if _, _, err := a.SignUp(ctx, fmt.Sprintf("new%d", i), "", "correct horse battery", "", "10.0.5.1"); err != nil {
			t.Fatalf("account %d from one address: %v", i+1, err)
		}
	}
	if _, _, err := a.SignUp(ctx, "new6", "", "correct horse battery", "", "10.0.5.1"); code(err) != "throttled" {
		t.Fatalf("a sixth account from one address: %v, want throttled", err)
	}
}

// TestSignInThrottledAndEnding: a wrong handle and a wrong password get the
// same answer; attempts are throttled per account (from any address) and
// per address (for any account) until time passes; a sign-in lasts
// LoginLifetime, ends at sign-out, and a new password ends them all.
func TestSignInThrottledAndEnding(t *testing.T) {
	h, a, c := emptyHub(t)
	if _, _, err := a.Setup(ctx, "alice", "", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateUser(ctx, "bob", ""); err != nil {
		t.Fatal(err)
	}
	_, _, wrong := a.SignIn(ctx, "alice", "not the password", "10.0.0.1")
	_, _, nobody := a.SignIn(ctx, "nobody", "not the password", "10.0.0.2")
	_, _, noPassword := a.SignIn(ctx, "bob", "not the password", "10.0.0.3")
	if code(wrong) != "bad_credentials" || wrong.Error() != nobody.Error() || wrong.Error() != noPassword.Error() {
		t.Fatalf("a wrong password %v, an unknown handle %v and no password yet %v differ", wrong, nobody, noPassword)
	}
	// Five wrong for alice from one address stop her there, not elsewhere.
	for i := range 5 {
		if _, _, err := a.SignIn(ctx, "alice", "not the password", "10.0.1.1"); code(err) != "bad_credentials" {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "10.0.1.1"); code(err) != "throttled" {
		t.Fatalf("the right password after five wrong from that address: %v, want throttled", err)
	}
	if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "10.0.2.1"); err != nil {
		t.Fatalf("the right password from another address: %v", err)
	}
	// Twenty wrong from one address across handles stop that address.
	for i := range 20 {
		a.SignIn(ctx, fmt.Sprintf("guess%d", i), "not the password", "10.0.3.1")
	}
	if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "10.0.3.1"); code(err) != "throttled" {
		t.Fatalf("after twenty from one address: %v, want throttled", err)
	}
	// An IPv6 client's /64 is one address.
	for i := range 20 {
		a.SignIn(ctx, fmt.Sprintf("guess%d", i), "not the password", fmt.Sprintf("2001:db8::%x", i+1))
	}
	if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "2001:db8::ffff"); code(err) != "throttled" {
		t.Fatalf("after twenty from one /64: %v, want throttled", err)
	}
	// Fifty wrong for alice from many addresses stop her account, for a
	// while; refused attempts spent nothing of hers.
	for i := range 50 {
		a.SignIn(ctx, "alice", "not the password", fmt.Sprintf("10.1.%d.%d", i/10, i%10))
	}
	if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "10.0.9.9"); code(err) != "throttled" {
		t.Fatalf("after fifty from many addresses: %v, want throttled", err)
	}
	c.Advance(time.Minute)
	// Signing in right costs no attempt: ten in a row from one address.
	for i := range 10 {
		if _, _, err := a.SignIn(ctx, "alice", "correct horse battery", "10.0.4.1"); err != nil {
			t.Fatalf("right sign-in %d: %v", i+1, err)
		}
	}
	u, secret, err := a.SignIn(ctx, "  Alice ", "correct horse battery", "10.0.2.1")
	if err != nil || u.Handle != "alice" || !u.Admin {
		t.Fatalf("a minute later: %+v, %v", u, err)
	}
	if got, err := a.SignedIn(ctx, secret); err != nil || got.ID != u.ID {
		t.Fatalf("signed in: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "pls_", secret + "x", "plu_" + secret[4:]} {
		if _, err := a.SignedIn(ctx, bad); code(err) != "unauthenticated" {
			t.Fatalf("signed in with %q: %v", bad, err)
		}
	}
	c.Advance(accounts.LoginLifetime)
	if _, err := a.SignedIn(ctx, secret); code(err) != "unauthenticated" {
		t.Fatalf("after LoginLifetime: %v", err)
	}
	_, one, _ := a.SignIn(ctx, "alice", "correct horse battery", "10.0.2.1")
	_, two, _ := a.SignIn(ctx, "alice", "correct horse battery", "10.0.2.2")
	if err := a.SignOut(ctx, one); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SignedIn(ctx, one); code(err) != "unauthenticated" {
		t.Fatalf("after sign-out: %v", err)
	}
	if _, err := a.SignedIn(ctx, two); err != nil {
		t.Fatalf("the other sign-in ended with the first: %v", err)
	}
	if err := a.SetPassword(ctx, "alice", "a new horse battery"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SignedIn(ctx, two); code(err) != "unauthenticated" {
		t.Fatalf("a sign-in outlived a new password: %v", err)
	}
	if _, _, err := a.SignIn(ctx, "alice", "a new horse battery", "10.0.2.3"); err != nil {
		t.Fatalf("the new password: %v", err)
	}
}
