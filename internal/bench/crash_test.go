package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/export"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
)

// The crash test's size: CI runs the defaults; a longer run is, e.g.,
// go test ./internal/bench -run TestCrash -crash.conversations=40 -crash.kills=20
var (
	crashSenders       = flag.Int("crash.senders", 8, "TestCrash: agents sending at once")
	crashConversations = flag.Int("crash.conversations", 3, fmt.Sprintf("TestCrash: conversations per sender, %d sends each", perConversation))
	crashKills         = flag.Int("crash.kills", 4, "TestCrash: times the server is killed with SIGKILL")
	crashSeed          = flag.Uint64("crash.seed", 0, "TestCrash: seed of the kill moments (0: a new one, logged)")
)

// TestCrashLosesAndDuplicatesNothing is DESIGN.md §13's promise under
// crashes: a send that returned sent survives a crash of the process right
// after, and a retry with the same client_msg_id never stores a second
// copy. Senders send at full rate, each send with its own client_msg_id,
// while the server is killed with SIGKILL several times and restarted on
// the same database and port; every send whose answer did not come is sent
// again with the same id until it is answered. Then every conversation
// must hold each intended message exactly once, with the message id and
// seq its answer gave, at seqs 1..n with no gap, and the recipient's event
// stream and inbox must have each message once.
func TestCrashLosesAndDuplicatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds palaver and kills it")
	}
	senders, convs, kills := *crashSenders, *crashConversations, *crashKills
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("%d senders × %d conversations × %d sends, %d kills, -crash.seed=%d", senders, convs, perConversation, kills, seed)
	ctx := t.Context()
	dir := t.TempDir()
	database := filepath.Join(dir, "palaver.db")
	w := prepareCrash(t, database, senders, convs)

	hc := newHTTPClient()
	srv := &crashServer{binary: buildPalaver(t, dir), database: database, log: filepath.Join(dir, "server.log"), http: hc}
	srv.startFor(t)
	url := "http://" + srv.addr + "/mcp/"
	for i := range w.senders {
		w.senders[i].c = &client{url: url, token: w.senders[i].token, http: hc}
	}

	// The killer: once a share of the sends is answered (a little more or
	// less each time), SIGKILL and restart the server.
	total := senders * convs * perConversation
	rng := rand.New(rand.NewPCG(seed, seed))
	var at []int
	var after []time.Duration
	for k := 1; k <= kills; k++ {
		share := total / (kills + 1)
		at = append(at, k*share+rng.IntN(share/2+1)-share/4)
		after = append(after, time.Duration(rng.Int64N(int64(killJitter))))
	}
	answered := make(chan struct{}, total)
	sendersDone := make(chan struct{})
	killed := make(chan int, 1)
	var down time.Duration // from each kill to its successor serving
	go func() {
		n, done := 0, 0
		defer func() { killed <- done }()
		for k, a := range at {
			for n < a {
				select {
				case <-answered:
					n++
				case <-sendersDone:
					return
				}
			}
			// Not at once: an answer has just gone out, so the kill would
			// fall just after a commit every time.
			select {
			case <-time.After(after[k]):
			case <-sendersDone:
				return
			}
			start := time.Now()
			if err := srv.restart(ctx); err != nil {
				t.Errorf("restart after %d answered sends: %v", n, err)
				return
			}
			down += time.Since(start)
			done++
		}
	}()

	// The senders: each message in turn, every one sent until answered.
	acks := make([][]crashAck, senders)
	var wg sync.WaitGroup
	for i := range w.senders {
		s := &w.senders[i]
		wg.Go(func() {
			for k, conv := range s.convs {
				for j := range perConversation {
					id := fmt.Sprintf("s%d-c%d-m%d", i, k, j)
					a, err := srv.send(ctx, s.c, conv, id)
					if err != nil {
						t.Errorf("sender %d, %s: %v", i, id, err)
						return
					}
					acks[i] = append(acks[i], a)
					answered <- struct{}{}
				}
			}
		})
	}
	wg.Wait()
	close(sendersDone)
	n := <-killed
	if n != kills && !t.Failed() {
		t.Errorf("the server was killed %d times, want %d", n, kills)
	}
	if t.Failed() {
		return
	}
	var retried, duplicates int
	for _, as := range acks {
		for _, a := range as {
			if a.attempts > 1 {
				retried++
				if a.duplicate {
					duplicates++
				}
			}
		}
	}
	t.Logf("%d sends answered; %d needed more than one attempt, %d of those were found stored already (committed before the kill, answer lost); down %v a kill on average",
		total, retried, duplicates, down/time.Duration(max(n, 1)))

	// What is on disk after one more crash.
	srv.kill()
	checkCrash(t, database, w, acks)
	if t.Failed() {
		return
	}

	// Every send again, to a server started since: the same id must
	// answer with the stored message and store nothing.
	if err := srv.start(ctx, srv.addr); err != nil {
		t.Fatal(err)
	}
	for i, as := range acks {
		wg.Go(func() {
			for _, a := range as {
				again, err := srv.send(ctx, w.senders[i].c, a.conv, a.clientMsgID)
				switch {
				case err != nil:
					t.Errorf("sending %s again: %v", a.clientMsgID, err)
					return
				case !again.duplicate || again.messageID != a.messageID || again.seq != a.seq:
					t.Errorf("sending %s again: message %s at seq %d (duplicate %v), first answered as %s at seq %d",
						a.clientMsgID, again.messageID, again.seq, again.duplicate, a.messageID, a.seq)
				}
			}
		})
	}
	wg.Wait()
	srv.kill()
	checkCrash(t, database, w, acks)
}

// crashWorld is what the crash test made before starting the server: one
// owner, a sink agent, and senders with their conversations with the sink.
type crashWorld struct {
	owner      string
	sinkToken  string
	sinkCursor string // the sink's stream before any send
	senders    []crashSender
}

type crashSender struct {
	token string
	convs []string
	c     *client
}

// crashAck is a send's answer.
type crashAck struct {
	conv, clientMsgID string
	messageID         string
	seq               int64
	duplicate         bool // answered with the message stored by an earlier attempt
	attempts          int
}

// crashBody is the body of the message with client_msg_id id: unique, so
// the duplicate brake never trips.
func crashBody(id string) string { return body("crash " + id + ":") }

// prepareCrash makes the people, agents, tokens and conversations on the
// database, as the admin commands do, before any server runs on it.
func prepareCrash(t *testing.T, database string, senders, convs int) *crashWorld {
	t.Helper()
	ctx := t.Context()
	db, h := openCrash(t, database)
	defer db.Close()
	w := &crashWorld{owner: "crash", senders: make([]crashSender, senders)}
	if _, err := h.CreateUser(ctx, w.owner, ""); err != nil {
		t.Fatal(err)
	}
	agent := func(slug string) (string, *hub.Caller) {
		t.Helper()
		if _, err := h.CreateAgent(ctx, hub.AgentSpec{Handle: w.owner + "/" + slug}); err != nil {
			t.Fatal(err)
		}
		_, secret, err := h.MintToken(ctx, hub.TokenSpec{Owner: w.owner, Agent: slug})
		if err != nil {
			t.Fatal(err)
		}
		c, err := h.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return secret, c
	}
	var sink *hub.Caller
	w.sinkToken, sink = agent("sink")
	for i := range w.senders {
		var c *hub.Caller
		w.senders[i].token, c = agent(fmt.Sprintf("s%d", i))
		for k := range convs {
			v, err := h.CreateThread(ctx, c, hub.ThreadSpec{Title: fmt.Sprintf("crash %d/%d", i, k), Participants: []string{sink.Agent.Handle()}})
			if err != nil {
				t.Fatal(err)
			}
			w.senders[i].convs = append(w.senders[i].convs, v.Conversation.ID)
		}
	}
	var err error
	if w.sinkCursor, err = h.LatestCursor(ctx, sink.Agent.ID); err != nil {
		t.Fatal(err)
	}
	return w
}

// openCrash opens the database and a hub on it, as the admin commands do.
func openCrash(t *testing.T, database string) (*store.DB, *hub.Hub) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	db, err := store.Open(t.Context(), store.Options{Database: database, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := hub.New(t.Context(), hub.Options{Store: db, Waker: notify.NewLocal(), Logger: quiet})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, h
}

// checkCrash reads back what the database holds after the crashes and
// compares it with the answers the senders got.
func checkCrash(t *testing.T, database string, w *crashWorld, acks [][]crashAck) {
	ctx := t.Context()
	db, h := openCrash(t, database)
	defer db.Close()
	owner, err := h.User(ctx, w.owner)
	if err != nil {
		t.Fatal(err)
	}
	byConv := map[string][]crashAck{}
	for _, as := range acks {
		for _, a := range as {
			byConv[a.conv] = append(byConv[a.conv], a)
		}
	}
	stored := map[string]bool{} // message ids
	exports := export.New(h, db)
	for i, s := range w.senders {
		for _, conv := range s.convs {
			e, err := exports.Conversation(ctx, owner, conv)
			if err != nil {
				t.Fatal(err)
			}
			c := e.Conversations[0]
			want := byConv[conv]
			if len(c.Messages) != len(want) || c.Conversation.LastSeq != int64(len(want)) {
				t.Errorf("sender %d, %s: %d messages stored, last seq %d; %d sends answered", i, conv, len(c.Messages), c.Conversation.LastSeq, len(want))
			}
			byID := map[string]*hub.Message{}   // by client_msg_id
			byBody := map[string]*hub.Message{} // the words are each message's own
			for n, m := range c.Messages {
				if first := byBody[m.Body]; first != nil {
					t.Errorf("%s: the words of %s stored twice: %s at seq %d and %s at seq %d (duplicated)", conv, first.ClientMsgID, first.ID, first.Seq, m.ID, m.Seq)
				}
				byBody[m.Body] = m
				if m.Seq != int64(n+1) {
					t.Errorf("%s: message %d of the conversation has seq %d, want %d (seqs 1..n, no gap)", conv, n+1, m.Seq, n+1)
				}
				switch {
				case m.ClientMsgID == "":
					t.Errorf("%s: seq %d, message %s, has no client_msg_id", conv, m.Seq, m.ID)
				case byID[m.ClientMsgID] != nil:
					t.Errorf("%s: client_msg_id %s stored twice: %s at seq %d and %s at seq %d (duplicated)",
						conv, m.ClientMsgID, byID[m.ClientMsgID].ID, byID[m.ClientMsgID].Seq, m.ID, m.Seq)
				default:
					byID[m.ClientMsgID] = m
				}
				stored[m.ID] = true
			}
			for _, a := range want {
				m := byID[a.clientMsgID]
				switch {
				case m == nil:
					t.Errorf("%s: %s was answered sent (%s, seq %d) and is not stored (lost)", conv, a.clientMsgID, a.messageID, a.seq)
				case m.ID != a.messageID || m.Seq != a.seq || m.Body != crashBody(a.clientMsgID):
					t.Errorf("%s: %s is stored as %s at seq %d; its answer gave %s at seq %d", conv, a.clientMsgID, m.ID, m.Seq, a.messageID, a.seq)
				}
			}
		}
	}

	// The sink's stream has a message.new for each, once; its inbox
	// waits for each.
	sink, err := h.Authenticate(ctx, w.sinkToken)
	if err != nil {
		t.Fatal(err)
	}
	heard := map[string]int{}
	for cursor := w.sinkCursor; ; {
		r, err := h.Wait(ctx, sink, hub.WaitInput{Cursor: &cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Events) == 0 {
			break
		}
		for _, e := range r.Events {
			if e.Type == hub.EventMessageNew {
				heard[e.MessageID]++
			}
		}
		cursor = r.Cursor
	}
	for id, n := range heard {
		if n != 1 || !stored[id] {
			t.Errorf("the sink heard message.new for %s %d times (stored: %v), want once", id, n, stored[id])
		}
	}
	if len(heard) != len(stored) {
		t.Errorf("the sink heard of %d messages, %d are stored", len(heard), len(stored))
	}
	in, err := h.Inbox(ctx, sink, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Total != len(stored) {
		t.Errorf("the sink's inbox holds %d messages, %d are stored", in.Total, len(stored))
	}
}

// crashServer is one `palaver serve` at a time on one database and
// address, killed and started again by the test.
type crashServer struct {
	binary, database string
	log              string       // the servers' stderr, one after another
	http             *http.Client // the senders'
	args, env        []string     // more of serve's arguments and environment

	mu   sync.Mutex
	proc *child
	addr string
	gen  int           // how many times it was started
	up   chan struct{} // closed once the current generation serves
}

// start starts the server on addr: the first time on any free port, after
// a kill on the same one.
// startFor starts the server for t on a port of its own: killed when t
// ends, its log shown when t failed.
func (s *crashServer) startFor(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(s.log); err == nil {
				t.Logf("the server's log:\n%s", b)
			}
		}
	})
	t.Cleanup(s.kill) // first: no server outlives the test
	if err := s.start(t.Context(), "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
}

func (s *crashServer) start(ctx context.Context, addr string) error {
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := startServe(ctx, s.binary, addr, s.database, f, s.args, s.env)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up == nil {
		s.up = make(chan struct{})
	}
	defer close(s.up) // on failure too: the senders then fail, not wait
	if err != nil {
		return err
	}
	s.proc, s.addr = c, c.addr
	s.gen++
	return nil
}

// restart kills the server with SIGKILL and starts it again on the same
// database and port. Senders whose calls fail from the kill on wait for
// the new one.
func (s *crashServer) restart(ctx context.Context) error {
	s.kill()
	return s.start(ctx, s.addr)
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *crashServer) kill() {
	s.mu.Lock()
	c := s.proc
	if c != nil {
		s.proc = nil
		// Before the kill: every call it cuts off waits for the next start.
		s.up = make(chan struct{})
	}
	s.mu.Unlock()
	if c != nil {
		c.cmd.Process.Kill()
		c.wait()
		s.http.CloseIdleConnections() // theirs was the killed one
	}
}

// current is the server's generation and its up channel.
func (s *crashServer) current() (int, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, s.up
}

// killJitter bounds the delay of each kill after the answer that
// triggers it: a few commits' time.
const killJitter = 5 * time.Millisecond

// sendAttempts is how many times one send may go unanswered by one
// generation of the server (a connection to the killed one can go stale
// after its successor started) before the test gives up on it.
const sendAttempts = 5

// send sends the message with client_msg_id id into conv until the server
// answers it. A call that gets no answer — the server was killed — waits
// until the server serves again and is made again with the same id; a
// refusal ends it.
func (s *crashServer) send(ctx context.Context, c *client, conv, id string) (crashAck, error) {
	a := crashAck{conv: conv, clientMsgID: id}
	args := map[string]any{"conversation_id": conv, "body": crashBody(id), "client_msg_id": id}
	failed, failedGen := 0, 0
	for {
		gen, _ := s.current()
		a.attempts++
		var out struct {
			Status    string `json:"status"`
			Reason    string `json:"reason"`
			MessageID string `json:"message_id"`
			Seq       int64  `json:"seq"`
			Duplicate bool   `json:"duplicate"`
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := c.call(cctx, "send_message", args, &out)
		cancel()
		if err == nil {
			if out.Status != "sent" {
				return a, fmt.Errorf("send_message: %s: %s", out.Status, out.Reason)
			}
			a.messageID, a.seq, a.duplicate = out.MessageID, out.Seq, out.Duplicate
			return a, nil
		}
		var r *refusal
		if errors.As(err, &r) || ctx.Err() != nil {
			return a, err
		}
		if gen != failedGen {
			failed, failedGen = 0, gen
		}
		if failed++; failed >= sendAttempts {
			return a, fmt.Errorf("no answer %d times from one server: %w", failed, err)
		}
		_, up := s.current()
		select {
		case <-up:
		case <-ctx.Done():
			return a, ctx.Err()
		}
	}
}

// buildPalaver builds the palaver command into dir.
func buildPalaver(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(dir, "palaver")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/palaverhq/palaver/cmd/palaver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
