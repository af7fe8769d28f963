package a2aclient_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/overview"
	"github.com/palaverhq/palaver/internal/projects"
)

// Remote A2A agents (§18, "Out"): an owner adds one by its card URL, the
// owner's agents talk to it, and its answers come back into the
// conversation, from a durable outbox.

// fakeRemote is an A2A 1.0 agent on loopback (TLS), reached by the name
// host through the test's resolver. It answers SendMessage with a message
// echoing the words, or — with tasks — a working task that GetTask
// reports completed once done is set; down makes it answer 503; hold
// makes each call wait until released.
type fakeRemote struct {
	srv  *httptest.Server
	host string

	mu    sync.Mutex
	sent  []string // messageIds of the SendMessage calls it took
	ctxs  []string // their contextIds
	calls int
	down  bool
	tasks bool
	done  bool
	auth  string
	hold  chan struct{}
	held  chan struct{}
	name  string // the card's name; "" is Echo
	// ask: a message in no task is answered with a task asking for input;
	// one sent into a task completes it. taskIDs are the taskIds sent.
	ask     bool
	taskIDs []string
	// stale: a message sent into a task is answered with the task as it
	// stood, still asking; GetTask then finds it completed.
	stale    bool
	answered map[string]string
}

func newFakeRemote(t *testing.T, host string) *fakeRemote {
	f := &fakeRemote{host: host}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRemote) base() string {
	u, _ := url.Parse(f.srv.URL)
	return "https://" + f.host + ":" + u.Port()
}

func (f *fakeRemote) cardURL() string { return f.base() + "/.well-known/agent-card.json" }

func (f *fakeRemote) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hold, held := f.hold, f.held
	f.mu.Unlock()
	if hold != nil && r.Method == http.MethodPost {
		held <- struct{}{}
		<-hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.auth = r.Header.Get("Authorization")
	if f.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if r.Method == http.MethodGet {
		name := f.name
		if name == "" {
			name = "Echo"
		}
		json.NewEncoder(w).Encode(map[string]any{"name": name, "description": name + " says it back", "version": "1",
			"skills":              []map[string]any{{"id": "echo", "name": "echo", "description": "", "tags": []string{}}},
			"supportedInterfaces": []map[string]string{{"url": f.base() + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}})
		return
	}
	var call struct {
		Method string `json:"method"`
		Params struct {
			ID      string `json:"id"`
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				TaskID    string `json:"taskId"`
				Parts     []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&call)
	var result any
	switch call.Method {
	case "SendMessage":
		m := call.Params.Message
		f.sent, f.ctxs, f.taskIDs = append(f.sent, m.MessageID), append(f.ctxs, m.ContextID), append(f.taskIDs, m.TaskID)
		if f.ask && m.TaskID == "" {
			result = map[string]any{"task": map[string]any{"id": "task-" + m.MessageID, "contextId": m.ContextID, "status": map[string]any{"state": "TASK_STATE_INPUT_REQUIRED",
				"message": map[string]any{"messageId": "q-" + m.MessageID, "role": "ROLE_AGENT", "parts": []map[string]any{{"text": "which city?"}}}}}}
		} else if f.ask && f.stale {
			if f.answered == nil {
				f.answered = map[string]string{}
			}
			f.answered[m.TaskID] = m.Parts[0].Text
			result = map[string]any{"task": map[string]any{"id": m.TaskID, "contextId": m.ContextID, "status": map[string]any{"state": "TASK_STATE_INPUT_REQUIRED",
				"message": map[string]any{"messageId": "q", "role": "ROLE_AGENT", "parts": []map[string]any{{"text": "which city?"}}}}}}
		} else if f.ask {
			result = map[string]any{"task": map[string]any{"id": m.TaskID, "contextId": m.ContextID, "status": map[string]any{"state": "TASK_STATE_COMPLETED"},
				"artifacts": []map[string]any{{"artifactId": "a", "parts": []map[string]any{{"text": "sunny in " + m.Parts[0].Text}}}}}}
		} else if f.tasks {
			result = map[string]any{"task": map[string]any{"id": "task-" + m.MessageID, "contextId": m.ContextID, "status": map[string]any{"state": "TASK_STATE_WORKING"}}}
		} else {
			result = map[string]any{"message": map[string]any{"messageId": "r-" + m.MessageID, "role": "ROLE_AGENT", "parts": []map[string]any{{"text": "echo: " + m.Parts[0].Text}}}}
		}
	case "GetTask":
		if words, ok := f.answered[call.Params.ID]; ok {
			result = map[string]any{"id": call.Params.ID, "status": map[string]any{"state": "TASK_STATE_COMPLETED"},
				"artifacts": []map[string]any{{"artifactId": "a", "parts": []map[string]any{{"text": "sunny in " + words}}}}}
		} else if f.done {
			result = map[string]any{"id": call.Params.ID, "status": map[string]any{"state": "TASK_STATE_COMPLETED"},
				"artifacts": []map[string]any{{"artifactId": "a", "parts": []map[string]any{{"text": "report for " + call.Params.ID}}},
					{"artifactId": "b", "name": "counts", "parts": []map[string]any{{"data": map[string]any{"errors": 3}}}}}}
		} else {
			result = map[string]any{"id": call.Params.ID, "status": map[string]any{"state": "TASK_STATE_WORKING",
				"message": map[string]any{"messageId": "s", "role": "ROLE_AGENT", "parts": []map[string]any{{"text": "reading the logs"}}}}}
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
}

func (f *fakeRemote) set(fn func(f *fakeRemote)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeRemote) sentIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// loopback answers every name with 127.0.0.1.
type loopback struct{}

func (loopback) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

var ctx = context.Background()

// world is a hub on a test store (hubtest) with the remote agents of its
// hub, called through client (nil: none can be added).
type world struct {
	*hubtest.World
	client  *a2aclient.Client
	remotes *a2aclient.Remotes
}

// reopen starts the hub and its remote agents afresh over the world's
// store, as a server does when it starts.
func (w *world) reopen(t testing.TB) {
	t.Helper()
	w.Reopen(t)
	w.remotes = a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: w.Hub, Store: w.Store, Client: w.client, Logger: slog.New(slog.DiscardHandler)})
}

// remoteWorld is a world whose hub calls remote agents through
// a2aclient, trusting the fakes' certificates, with the fakes' hosts let
// through to loopback (--allow-private-host).
func remoteWorld(t *testing.T, fakes ...*fakeRemote) *world {
	t.Helper()
	var hosts []string
	var client *a2aclient.Client
	if len(fakes) > 0 {
		pool := fakes[0].srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		for _, f := range fakes[1:] {
			pool.AddCert(f.srv.Certificate())
		}
		client = a2aclient.New(a2aclient.Options{RootCAs: pool, Resolver: loopback{}})
		for _, f := range fakes {
			hosts = append(hosts, f.host)
		}
	} else {
		client = a2aclient.New(a2aclient.Options{Resolver: loopback{}})
	}
	w := &world{World: hubtest.Open(t, hub.DefaultSettings()), client: client}
	w.Options = func(o *hub.Options) { o.PrivateHosts = hosts }
	w.reopen(t)
	return w
}

func addRemote(t *testing.T, w *world, slug string, f *fakeRemote) *hub.RemoteAgent {
	t.Helper()
	r, err := w.remotes.Add(ctx, w.Person(t, "alice"), a2aclient.RemoteAgentInput{Slug: slug, CardURL: f.cardURL(), Credential: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// messages reads the conversation as the planner.
func messages(t *testing.T, w *world, conv string) []*hub.Message {
	t.Helper()
	page, err := w.Hub.ReadMessages(ctx, w.Planner, hub.ReadInput{ConversationID: conv, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return page.Messages
}

func deliverRemotes(t *testing.T, w *world) hub.Pass {
	t.Helper()
	p, err := w.remotes.Deliver(ctx)
	if err != nil {
		t.Fatalf("%v: %v", err, hub.AsError(err).Err)
	}
	return p
}

// TestRemoteAgentRoundTrip: alice adds a remote agent; her planner opens
// a conversation with it at once (her adding it is the consent), and a
// message to it comes back answered, from the remote, with the card's URL
// in its provenance — its one call carrying the credential, the message's
// own id on the A2A side and the conversation as its context.
func TestRemoteAgentRoundTrip(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	w := remoteWorld(t, f)
	r := addRemote(t, w, "echo", f)
	if r.Handle != "alice/echo" || r.Name != "Echo" || r.Version != "1.0" || !r.HasCredential || strings.Join(r.Skills, ",") != "echo" {
		t.Fatalf("remote = %+v", r)
	}
	conv := w.Direct(t, w.Planner, "alice/echo")
	if _, err := w.Hub.SendMessage(ctx, w.Planner, hub.SendInput{ConversationID: conv, Body: "hello"}); err != nil {
		t.Fatalf("%v: %v", err, hub.AsError(err).Err)
	}
	if p := deliverRemotes(t, w); p.Claimed != 1 || p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("pass = %+v", p)
	}
	ms := messages(t, w, conv)
	if len(ms) != 2 {
		t.Fatalf("%d messages", len(ms))
	}
	reply := ms[1]
	p := reply.Provenance()
	if reply.Body != "echo: hello" || reply.SenderHandle != "alice/echo" || p.Author != hub.AuthorRemote || p.Remote != f.cardURL() || p.AI {
		t.Fatalf("reply = %+v, provenance %+v", reply, p)
	}
	sent := f.sentIDs()
	if len(sent) != 1 || !strings.HasPrefix(sent[0], "rmc_") || f.ctxs[0] != conv || f.auth != "Bearer s3cret" {
		t.Fatalf("sent %v in %v, auth %q", sent, f.ctxs, f.auth)
	}
	// Nothing is left to send; the remote's list shows the delivery.
	if p := deliverRemotes(t, w); p.Claimed != 0 {
		t.Fatalf("again: %+v", p)
	}
	list, err := w.remotes.List(ctx, w.Person(t, "alice"))
	if err != nil || len(list) != 1 || list[0].Pending != 0 || list[0].LastError != "" || list[0].LastAt.IsZero() {
		t.Fatalf("list = %+v, %v", list, err)
	}
}

// TestRemoteAgentCardRefused: a card at a private address (the name
// resolves to loopback, and no host is let through) is refused before
// anything is made.
func TestRemoteAgentCardRefused(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	w := remoteWorld(t) // no host let through
	_, err := w.remotes.Add(ctx, w.Person(t, "alice"), a2aclient.RemoteAgentInput{Slug: "echo", CardURL: f.cardURL()})
	if e := hub.AsError(err); err == nil || e.Kind != hub.KindInvalid || !strings.Contains(e.Msg, "loopback") || !strings.Contains(e.Msg, "nothing was added") {
		t.Fatalf("err = %v", err)
	}
	if f.calls != 0 {
		t.Fatalf("the remote was called %d times", f.calls)
	}
	if _, err := w.Hub.Agent(ctx, "alice/echo"); hub.AsError(err).Kind != hub.KindNotFound {
		t.Fatalf("agent: %v", err)
	}
	if _, err := w.remotes.Add(ctx, w.Person(t, "alice"), a2aclient.RemoteAgentInput{Slug: "echo", CardURL: "http://echo.example.com/card"}); hub.AsError(err).Kind != hub.KindInvalid {
		t.Fatalf("http: %v", err)
	}
}

// TestRemoteAgentTaskCompletesLater: the remote answers with a task still
// working; the outbox asks after it on its schedule, what the task says
// while it works becomes a task event post (once, however often it is
// asked), and once it completed each of its artifacts comes into the
// conversation as a message — once.
func TestRemoteAgentTaskCompletesLater(t *testing.T) {
	f := newFakeRemote(t, "slow.example.com")
	f.tasks = true
	w := remoteWorld(t, f)
	addRemote(t, w, "slow", f)
	conv := w.Direct(t, w.Planner, "alice/slow")
	w.Send(t, w.Planner, conv, "report please")
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Failed] != 1 {
		t.Fatalf("first: %+v", p)
	}
	if n := len(messages(t, w, conv)); n != 1 {
		t.Fatalf("%d messages while working", n)
	}
	// Not due yet: nothing is asked.
	if p := deliverRemotes(t, w); p.Claimed != 0 {
		t.Fatalf("early: %+v", p)
	}
	for range 2 {
		w.Clock.Advance(time.Minute)
		if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Failed] != 1 {
			t.Fatalf("still working: %+v", p)
		}
		ms := messages(t, w, conv)
		if len(ms) != 2 {
			t.Fatalf("%d messages while working; want the message and one status post", len(ms))
		}
		st := ms[1]
		var meta map[string]string
		json.Unmarshal(st.Metadata, &meta)
		if st.Kind != "task" || st.Body != "reading the logs" || st.SenderHandle != "alice/slow" || st.Provenance().Author != hub.AuthorRemote ||
			meta["state"] != "working" || meta["task_id"] != "task-"+f.sentIDs()[0] {
			t.Fatalf("the status post = %+v, metadata %s", st, st.Metadata)
		}
	}
	f.set(func(f *fakeRemote) { f.done = true })
	w.Clock.Advance(time.Minute)
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("done: %+v", p)
	}
	ms := messages(t, w, conv)
	sent := f.sentIDs()
	if len(ms) != 4 || ms[2].Body != "report for task-"+sent[0] || ms[2].Kind != hub.MessageText || len(sent) != 1 {
		t.Fatalf("messages %d, last %q; sent %v", len(ms), ms[len(ms)-1].Body, sent)
	}
	// Each artifact is a message of its own, its data parts in its
	// metadata (and, having no text, its words).
	if d := ms[3]; d.Body != `[{"errors":3}]` || d.Kind != hub.MessageText || d.SenderHandle != "alice/slow" || d.Provenance().Author != hub.AuthorRemote ||
		string(d.Metadata) != `{"artifact_id":"b","data":[{"errors":3}],"name":"counts"}` {
		t.Fatalf("the data artifact = %q, metadata %s", d.Body, d.Metadata)
	}
	if p := deliverRemotes(t, w); p.Claimed != 0 {
		t.Fatalf("after: %+v", p)
	}
}

// TestRemoteAgentDownThenUp: while the remote answers 503 the call stays
// in the outbox, its error shown on the remote's list; once it is up the
// message goes — with the same id — and is answered once.
func TestRemoteAgentDownThenUp(t *testing.T) {
	f := newFakeRemote(t, "flaky.example.com")
	w := remoteWorld(t, f)
	addRemote(t, w, "flaky", f)
	conv := w.Direct(t, w.Planner, "alice/flaky")
	f.set(func(f *fakeRemote) { f.down = true })
	w.Send(t, w.Planner, conv, "are you there")
	for range 3 {
		if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Failed] != 1 {
			t.Fatalf("down: %+v", p)
		}
		w.Clock.Advance(time.Hour)
	}
	list, _ := w.remotes.List(ctx, w.Person(t, "alice"))
	if list[0].Pending != 1 || !strings.Contains(list[0].LastError, "503") {
		t.Fatalf("while down: %+v", list[0])
	}
	// The Bridge shows the remote's calls: one waiting, and why.
	b, err := overview.New(w.Hub, w.Store).Bridge(ctx, w.Person(t, "alice"))
	if err != nil || len(b.Remotes) != 1 || b.Remotes[0].Handle != "alice/flaky" || b.Remotes[0].Pending != 1 || !strings.Contains(b.Remotes[0].LastError, "503") {
		t.Fatalf("the Bridge's remotes while down: %+v, %v", b.Remotes, err)
	}
	f.set(func(f *fakeRemote) { f.down = false })
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("up: %+v", p)
	}
	w.Clock.Advance(time.Hour)
	if p := deliverRemotes(t, w); p.Claimed != 0 {
		t.Fatalf("after: %+v", p)
	}
	ms := messages(t, w, conv)
	if len(ms) != 2 || ms[1].Body != "echo: are you there" || len(f.sentIDs()) != 1 {
		t.Fatalf("messages %d, sent %v", len(ms), f.sentIDs())
	}
	list, _ = w.remotes.List(ctx, w.Person(t, "alice"))
	if list[0].Pending != 0 || list[0].LastError != "" {
		t.Fatalf("after: %+v", list[0])
	}
}

// TestRemoteAgentDeadDelaysNoOther: while one remote holds its call
// unanswered, a message to another remote is sent and answered.
func TestRemoteAgentDeadDelaysNoOther(t *testing.T) {
	dead, live := newFakeRemote(t, "dead.example.com"), newFakeRemote(t, "live.example.com")
	w := remoteWorld(t, dead, live)
	addRemote(t, w, "dead", dead)
	addRemote(t, w, "live", live)
	release := make(chan struct{})
	dead.set(func(f *fakeRemote) { f.hold, f.held = release, make(chan struct{}, 1) })
	t.Cleanup(func() { close(release) })
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.remotes.Run(run, time.Hour, nil) }()
	t.Cleanup(func() { stop(); <-done })
	toDead, toLive := w.Direct(t, w.Planner, "alice/dead"), w.Direct(t, w.Planner, "alice/live")
	w.Send(t, w.Planner, toDead, "hello dead")
	select {
	case <-dead.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead remote was never called")
	}
	woke, unsubscribe := w.Waker.Subscribe(w.Planner.Agent.ID)
	defer unsubscribe()
	w.Send(t, w.Planner, toLive, "hello live")
	deadline := time.After(10 * time.Second)
	for len(messages(t, w, toLive)) != 2 {
		select {
		case <-woke:
		case <-deadline:
			t.Fatal("the live remote's answer did not come while the dead one held its call")
		}
	}
	if n := len(messages(t, w, toDead)); n != 1 {
		t.Fatalf("%d messages to the dead remote", n)
	}
}

// TestRemoteAgentConsent: another owner's agent reaches alice's remote
// agent only through a grant, as any agent of hers; and the remote is
// not brought into her home project, whose threads it would otherwise
// hear.
func TestRemoteAgentConsent(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	w := remoteWorld(t, f)
	addRemote(t, w, "echo", f)
	if _, err := w.Hub.OpenConversation(ctx, w.Helper, []string{"alice/echo"}); err == nil {
		t.Fatal("bob's helper reached alice's remote agent without a grant")
	}
	if n := f.calls; n != 1 { // the card, nothing else
		t.Fatalf("the remote was called %d times", n)
	}
	if _, err := w.Hub.Whoami(ctx, w.Planner, "", ""); err != nil { // makes the home project
		t.Fatal(err)
	}
	a, err := w.Hub.Agent(ctx, "alice/echo")
	if err != nil {
		t.Fatal(err)
	}
	ls, err := projects.New(w.Hub, w.Store).ListProjects(ctx, &hub.Caller{Agent: a, Owner: w.Person(t, "alice")})
	if err != nil || len(ls.Projects) != 0 {
		t.Fatalf("the remote agent's projects: %+v, %v", ls, err)
	}
}

// TestRemoteAgentAnswerPostedOnce: a server that stopped after posting an
// answer but before the call left the outbox makes the call again (the
// same A2A messageId) — and the answer is not posted a second time.
func TestRemoteAgentAnswerPostedOnce(t *testing.T) {
	f := newFakeRemote(t, "echo.example.com")
	w := remoteWorld(t, f)
	r := addRemote(t, w, "echo", f)
	conv := w.Direct(t, w.Planner, "alice/echo")
	sent := w.Send(t, w.Planner, conv, "hello")
	deliverRemotes(t, w)
	ms := messages(t, w, conv)
	if len(ms) != 2 {
		t.Fatalf("%d messages", len(ms))
	}
	callID := ms[1].ClientMsgID
	// The call as it was before its record: still in the outbox.
	err := w.Store.Update(ctx, func(tx hub.Tx) error {
		return tx.InsertRemoteCalls(ctx, []*hub.RemoteCall{{ID: callID, AgentID: r.AgentID, ConversationID: conv, MessageID: sent.Message.ID,
			SenderHandle: "alice/planner", Body: "hello", CreatedAt: w.Clock.Now(), DueAt: w.Clock.Now()}})
	})
	if err != nil {
		t.Fatal(err)
	}
	w.reopen(t)
	if p := deliverRemotes(t, w); p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("again: %+v", p)
	}
	if ms := messages(t, w, conv); len(ms) != 2 {
		t.Fatalf("%d messages after the call was made again", len(ms))
	}
	if ids := f.sentIDs(); len(ids) != 2 || ids[0] != callID || ids[1] != callID {
		t.Fatalf("sent %v; want the same messageId %s twice", ids, callID)
	}
}
