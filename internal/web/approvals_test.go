package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// agent makes an agent of an existing person and returns it signed in
// with a fresh token.
func (s *site) agent(t *testing.T, handle string) (*hub.Caller, string) {
	t.Helper()
	if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: handle, Description: "test agent " + handle}); err != nil {
		t.Fatal(err)
	}
	owner, slug, _ := hub.ParseHandle(handle)
	_, secret, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// reauth is the agent's caller again after its owner changed it.
func (s *site) reauth(t *testing.T, secret string) *hub.Caller {
	t.Helper()
	c, err := s.hub.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestApprovalsEveryKind puts one of each kind of §9 before alice and
// decides each on the Approvals page, with the hub's state checked after
// each decision: a held message edited then approved (owner_edited), one
// approved as written though the browser sends it back with CRLF
// (owner_approved), one rejected; a question answered by an option; a
// grant request approved; an inbound ask denied; a contact request
// accepted; a project proposal approved and an access request rejected.
func TestApprovalsEveryKind(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	bob := s.person(t, "bob")
	carol := s.person(t, "carol")
	planner, plannerToken := s.agent(t, "alice/planner")
	s.agent(t, "alice/reviewer")
	helper, _ := s.agent(t, "bob/helper")

	// bob and alice are contacts; bob lets his helper reach alice's agents,
	// and the helper asks to come in.
	bob.submit(bob.get("/contacts"), "/contacts", url.Values{"handle": {"alice"}})
	alice.submit(alice.get("/contacts"), "/contacts/bob/approve", nil)
	if _, err := s.hub.SetGrant(ctx, mustUser(t, s, "bob"), "bob/helper", "alice", true, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil {
		t.Fatal("the helper came in without an ask")
	}
	carol.submit(carol.get("/contacts"), "/contacts", url.Values{"handle": {"alice"}})

	conv, err := s.hub.OpenConversation(ctx, planner, []string{"alice/reviewer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.SetAgentMode(ctx, "alice/planner", hub.ModeReview); err != nil {
		t.Fatal(err)
	}
	planner = s.reauth(t, plannerToken)
	var held []*hub.Message
	for _, body := range []string{"draft one", "line one\nline two", "not this"} {
		r, err := s.hub.SendMessage(ctx, planner, hub.SendInput{ConversationID: conv.Conversation.ID, Body: body})
		if err != nil || r.Message.Status != hub.MessageHeld {
			t.Fatalf("a send in review: %+v, %v", r, err)
		}
		held = append(held, r.Message)
	}
	q, err := s.hub.AskOwner(ctx, planner, "Which branch?", "", "", []string{"main", "next"})
	if err != nil {
		t.Fatal(err)
	}
	gr, err := s.hub.RequestGrant(ctx, planner, "bob", false, true, "to ship with bob's helper")
	if err != nil {
		t.Fatal(err)
	}
	proposal, err := s.projects.ProposeProject(ctx, planner, "Release 2.0", "the next release", "we need a place to plan", "")
	if err != nil {
		t.Fatal(err)
	}
	secret, err := s.hub.CreateProject(ctx, mustUser(t, s, "alice"), "Secret plans", "")
	if err != nil {
		t.Fatal(err)
	}
	access, err := s.projects.RequestProjectAccess(ctx, planner, secret.ID, "I could help")
	if err != nil {
		t.Fatal(err)
	}

	p := alice.get("/approvals")
	for _, want := range []string{"Message held for review", "Question", "Which branch?", "Grant request", "to ship with bob's helper",
		"Asks to come in", "bob/helper", "Contact request", "@carol", "Project proposal", "Release 2.0", "Project access request", "Secret plans"} {
		if !strings.Contains(p.text(), want) {
			t.Fatalf("the approvals page lacks %q: %s", want, p.text())
		}
	}
	if got := p.byClass("count"); got != "9" {
		t.Fatalf("the navigation counts %q waiting, want 9", got)
	}

	// Held messages: edit then approve; approve as written; reject.
	p = alice.submit(p, "/approvals/"+held[0].ID+"/approve", url.Values{"body": {"draft one, tightened by alice"}})
	if !strings.Contains(p.notice(), "owner_edited") {
		t.Fatalf("edit and approve: %q %q", p.notice(), p.errorText())
	}
	form := p.form("/approvals/" + held[1].ID + "/approve")
	for _, f := range form.fields {
		if f.name == "body" && f.value != "line one\nline two" {
			t.Fatalf("the edit box holds %q, want the agent's words", f.value)
		}
	}
	p = alice.submit(p, "/approvals/"+held[1].ID+"/approve", url.Values{"body": {"line one\r\nline two"}})
	if !strings.Contains(p.notice(), "owner_approved") {
		t.Fatalf("approve as written (CRLF from the browser): %q %q", p.notice(), p.errorText())
	}
	p = alice.submit(p, "/approvals/"+held[2].ID+"/reject", nil)
	_, msgs, err := s.hub.PersonMessages(ctx, mustUser(t, s, "alice"), conv.Conversation.ID, 0, 0)
	if err != nil || len(msgs.Messages) != 2 || msgs.Messages[0].Authority != hub.AuthorityEdited || msgs.Messages[0].Body != "draft one, tightened by alice" ||
		msgs.Messages[0].OriginalBody != "draft one" || msgs.Messages[1].Authority != hub.AuthorityApproved || msgs.Messages[1].Body != "line one\nline two" {
		t.Fatalf("the conversation after the decisions: %+v, %v", msgs, err)
	}

	// The question, by its option button.
	p = alice.submit(p, "/approvals/"+q.ID+"/answer", nil, "choice=main")
	if !strings.Contains(p.notice(), "Answered") {
		t.Fatalf("answer: %q %q", p.notice(), p.errorText())
	}
	as, _ := s.hub.Approvals(ctx, mustUser(t, s, "alice"))
	for _, a := range as {
		if a.ID == q.ID {
			t.Fatal("the answered question still waits")
		}
	}

	// The grant request, the inbound ask, the contact request, the project
	// requests.
	p = alice.submit(p, "/approvals/"+gr.ID+"/approve", nil)
	if w, err := s.hub.Whoami(ctx, s.reauth(t, plannerToken), "", ""); err != nil || len(w.Grants) != 1 || !w.Grants[0].Grant.AllowAgents {
		t.Fatalf("after approving the grant request: %+v, %v", w, err)
	}
	var askID string
	for _, a := range as {
		if a.Kind == hub.ApprovalInboundAsk {
			askID = a.ID
		}
	}
	p = alice.submit(p, "/approvals/"+askID+"/reject", nil)
	if _, err := s.hub.OpenConversation(ctx, helper, []string{"alice/planner"}); err == nil {
		t.Fatal("a denied agent came in")
	}
	var contactID string
	for _, a := range as {
		if a.Kind == hub.ApprovalContactRequest {
			contactID = a.ID
		}
	}
	p = alice.submit(p, "/approvals/"+contactID+"/approve", nil)
	p = alice.submit(p, "/approvals/"+proposal.ID+"/approve", nil)
	p = alice.submit(p, "/approvals/"+access.ID+"/reject", nil)
	if !strings.Contains(p.text(), "Nothing waits for you") || p.byClass("count") != "" {
		t.Fatalf("after every decision: %s (count %q) %q", p.text(), p.byClass("count"), p.errorText())
	}
	ps, _ := s.hub.Projects(ctx, mustUser(t, s, "alice"))
	var names []string
	for _, pr := range ps {
		names = append(names, pr.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "Release 2.0") {
		t.Fatalf("alice's projects after approving the proposal: %v", names)
	}
	cs, _ := s.hub.Contacts(ctx, mustUser(t, s, "carol"))
	if len(cs) != 1 || cs[0].Contact.Status != hub.ContactAccepted {
		t.Fatalf("carol's contact with alice: %+v", cs)
	}

	// A decision twice, or on a made-up id, says so and changes nothing.
	p = alice.post("/approvals/"+held[2].ID+"/approve", nil)
	if p.path() != "/approvals" || p.errorText() == "" {
		t.Fatalf("approving a rejected message: %q", p.errorText())
	}
	p = alice.post("/approvals/msg_nope/approve", nil)
	if !strings.Contains(p.errorText(), "no approval") && !strings.Contains(p.errorText(), "no message") {
		t.Fatalf("a made-up id: %q", p.errorText())
	}
}

// post sends a form as a page of ours would, without reading it first
// (a form from an older copy of the page).
func (b *browser) post(path string, v url.Values) *page {
	b.t.Helper()
	req := newPost(b.s.url+path, v)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return b.do(req)
}

func mustUser(t *testing.T, s *site, handle string) *hub.User {
	t.Helper()
	u, err := s.hub.User(ctx, handle)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestHintOnThePage: a hinted refusal names the dashboard's page for what
// to do, not a command line.
func TestHintOnThePage(t *testing.T) {
	s := newSite(t)
	alice := s.person(t, "alice")
	req := newPost(s.url+"/approvals/msg_01m8rnj7xb9h086qcmtwf2x24h/approve", nil)
	req.Header.Set("Origin", s.url)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	p := alice.do(req)
	want := `no message "msg_01m8rnj7xb9h086qcmtwf2x24h" is held for alice's review; list them on the Approvals page`
	if p.path() != "/approvals" || p.errorText() != want {
		t.Errorf("approving a message that is not held: on %s, %q; want /approvals, %q", p.path(), p.errorText(), want)
	}
}
