package api_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/servertest"
	"github.com/palaverhq/palaver/internal/store/storetest"
)

// remoteHost is the remote agent's name; the test's resolver puts it on
// loopback and the server lets it through (--allow-private-host).
const remoteHost = "echo.example.com"

// TestJSRemoteAgent (§18, "Out"): alice adds, over REST, an A2A 1.0 agent
// made with @a2a-js/sdk's own server; her planner finds it among its
// contacts and talks to it with the MCP tools it has: a message answered
// at once, a task that completes later (asked after until it does), a
// task that fails (an error post), and a task that asks for input, which
// the planner's next message answers inside it and which completes with
// an artifact of text and data; then the remote down (the message waits
// in the outbox, its error listed) while Palaver restarts, and up again —
// each message sent to the remote once,
// its answers untrusted, from the card's URL. The list never shows the
// credential; removing it ends it.
//
// Skipped unless PALAVER_A2A_JS names a node_modules folder holding
// @a2a-js/sdk and express (CONTRIBUTING.md).
func TestJSRemoteAgent(t *testing.T) {
	modules := os.Getenv("PALAVER_A2A_JS")
	if modules == "" {
		t.Skip("PALAVER_A2A_JS is not set; it names a node_modules folder holding @a2a-js/sdk and express (CONTRIBUTING.md says how to install them)")
	}
	remote := startJSRemote(t, modules)
	clock := hubtest.LiveClock()
	db := storetest.Open(t)
	options := func(o *hub.Options) { o.Clock, o.PrivateHosts = clock, []string{remoteHost} }
	client := a2aclient.New(a2aclient.Options{RootCAs: remote.roots, Resolver: loopbackResolver{}})
	s := newServerOn(t, servertest.Options{Store: db, Hub: options, RemoteClient: client})
	cardURL := remote.base + "/.well-known/agent-card.json"

	code, added := s.rest(t, "alice", "POST", "/remote-agents", map[string]any{"name": "echo", "card_url": cardURL, "credential": "s3cret"})
	if code != 200 || added["handle"] != "alice/echo" || added["name"] != "Echo" || added["a2a_version"] != "1.0" || added["has_credential"] != true ||
		added["credential"] != nil || added["endpoint"] != remote.base+"/a2a/jsonrpc" {
		t.Fatalf("adding: %d %v", code, added)
	}
	contacts := s.tool(t, "alice/planner", "list_contacts", nil)
	siblings, _ := contacts["sibling_agents"].([]any)
	found := false
	for _, a := range siblings {
		if a, _ := a.(map[string]any); a["handle"] == "alice/echo" && a["description"] == "says it back" {
			found = true
		}
	}
	if !found {
		t.Fatalf("list_contacts does not show the remote agent among the siblings: %v", contacts)
	}
	opened := s.tool(t, "alice/planner", "open_conversation", map[string]any{"handles": []string{"alice/echo"}})
	conv, _ := opened["conversation_id"].(string)
	if conv == "" {
		t.Fatalf("open_conversation: %v", opened)
	}
	deliver := func(want string) {
		t.Helper()
		p, err := s.Remotes.Deliver(context.Background())
		if err != nil || p.Outcomes[want] != 1 {
			t.Fatalf("a delivery step: %+v, %v; want one %s", p, err, want)
		}
	}
	// settle asks after a task until it ended: the remote ends it on its
	// own time, and until it has, the task is still working when asked
	// after, and asked after again later.
	settle := func() {
		t.Helper()
		for range 200 { // 200 minutes: well within Retry.For
			clock.Advance(time.Minute)
			p, err := s.Remotes.Deliver(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if p.Outcomes[a2aclient.Delivered] == 1 {
				return
			}
		}
		t.Fatal("the task never ended")
	}
	last := func() map[string]any {
		t.Helper()
		got := s.tool(t, "alice/planner", "read_messages", map[string]any{"conversation_id": conv, "limit": 50})
		ms, _ := got["messages"].([]any)
		if len(ms) == 0 || got["untrusted"] != true {
			t.Fatalf("read_messages: %v", got)
		}
		return ms[len(ms)-1].(map[string]any)
	}
	send := func(body string) {
		t.Helper()
		if got := s.tool(t, "alice/planner", "send_message", map[string]any{"conversation_id": conv, "body": body}); got["message_id"] == nil && got["id"] == nil {
			t.Fatalf("send_message: %v", got)
		}
	}

	send("hello")
	deliver(a2aclient.Delivered)
	m := last()
	prov, _ := m["provenance"].(map[string]any)
	if m["body"] != "echo: hello" || m["sender"].(map[string]any)["handle"] != "alice/echo" || prov["author"] != "remote" || prov["remote"] != cardURL {
		t.Fatalf("the answer: %v", m)
	}
	if sent := remote.next(t, "sent"); sent["contextId"] != conv || sent["text"] != "hello" {
		t.Fatalf("the remote got %v", sent)
	}

	send("slow quarterly")
	deliver(a2aclient.Failed) // working: asked after later
	remote.next(t, "sent")
	if m := last(); m["body"] != "slow quarterly" {
		t.Fatalf("while the task works: %v", m)
	}
	remote.say("finish")
	settle()
	if m := last(); m["body"] != "the report on quarterly" {
		t.Fatalf("the completed task: %v", m)
	}

	send("fail now")
	settle()
	remote.next(t, "sent")
	got := s.tool(t, "alice/planner", "read_messages", map[string]any{"conversation_id": conv})
	if b, _ := json.Marshal(got); !strings.Contains(string(b), "no such report") {
		t.Fatalf("the failed task's error post is not in the conversation: %s", b)
	}
	if extra := remote.more(); len(extra) != 0 {
		t.Fatalf("the remote was sent more: %v", extra)
	}

	code, list := s.rest(t, "alice", "GET", "/remote-agents", nil)
	rs, _ := list["remote_agents"].([]any)
	if code != 200 || len(rs) != 1 {
		t.Fatalf("the list: %d %v", code, list)
	}
	if r := rs[0].(map[string]any); r["credential"] != nil || r["pending"] != float64(0) || !strings.Contains(r["last_error"].(string), "failed") {
		t.Fatalf("listed: %v", r)
	}
	// A task that asks for input: its question comes back mentioning the
	// planner, and the planner's next message is sent into that task —
	// the same contextId and taskId — which completes it with an artifact
	// of text and data.
	send("ask the weather")
	deliver(a2aclient.Delivered)
	asked := remote.next(t, "sent")
	if m := last(); !strings.HasPrefix(m["body"].(string), "which city?") || !strings.Contains(fmt.Sprint(m["mentions"]), "alice/planner") {
		t.Fatalf("the question: %v", m)
	}
	send("Lisbon")
	if p, err := s.Remotes.Deliver(context.Background()); err != nil || p.Claimed != 1 {
		t.Fatalf("the answer's delivery: %+v %v", p, err)
	} else if p.Outcomes[a2aclient.Delivered] != 1 {
		settle()
	}
	answer := remote.next(t, "sent")
	if answer["text"] != "Lisbon" || answer["contextId"] != conv || answer["taskId"] == "" || answer["messageId"] == asked["messageId"] {
		t.Fatalf("the answer reached the remote as %v (the question's was %v)", answer, asked)
	}
	m = last()
	var data []map[string]any
	if md, _ := m["metadata"].(map[string]any); md != nil {
		b, _ := json.Marshal(md["data"])
		json.Unmarshal(b, &data)
	}
	if m["body"] != "sunny in Lisbon" || len(data) != 1 || data[0]["city"] != "Lisbon" || data[0]["temp"] != float64(21) {
		t.Fatalf("the artifact: %v", m)
	}
	if extra := remote.more(); len(extra) != 0 {
		t.Fatalf("the remote was sent more: %v", extra)
	}

	// The remote is down: the message stays in the outbox, its error on
	// the list. Palaver restarts (a new hub on the same database), the
	// remote comes up, and the message goes — once — and is answered once.
	remote.say("down")
	remote.next(t, "down")
	send("are you there")
	deliver(a2aclient.Failed)
	if _, list := s.rest(t, "alice", "GET", "/remote-agents", nil); !strings.Contains(fmt.Sprint(list), "503") || !strings.Contains(fmt.Sprint(list), "pending:1") {
		t.Fatalf("while down: %v", list)
	}
	ho := hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)}
	options(&ho)
	h, err := hub.New(context.Background(), ho)
	if err != nil {
		t.Fatal(err)
	}
	restarted := a2aclient.NewRemotes(a2aclient.RemotesOptions{Hub: h, Store: db, Client: client, Logger: slog.New(slog.DiscardHandler)})
	remote.say("up")
	remote.next(t, "up")
	clock.Advance(time.Minute)
	if p, err := restarted.Deliver(context.Background()); err != nil || p.Outcomes[a2aclient.Delivered] != 1 {
		t.Fatalf("after the restart, once up: %+v %v", p, err)
	}
	if sent := remote.next(t, "sent"); sent["text"] != "are you there" {
		t.Fatalf("the remote got %v", sent)
	}
	if m := last(); m["body"] != "echo: are you there" {
		t.Fatalf("the answer after the restart: %v", m)
	}
	if p, err := restarted.Deliver(context.Background()); err != nil || p.Claimed != 0 {
		t.Fatalf("again: %+v %v", p, err)
	}
	if extra := remote.more(); len(extra) != 0 {
		t.Fatalf("the remote was sent more: %v", extra)
	}
	if code, _ := s.rest(t, "alice", "DELETE", "/remote-agents/echo", nil); code != 200 {
		t.Fatalf("removing: %d", code)
	}
	if code, list := s.rest(t, "alice", "GET", "/remote-agents", nil); code != 200 || len(list["remote_agents"].([]any)) != 0 {
		t.Fatalf("after removing: %d %v", code, list)
	}
	if code, _ := s.rest(t, "alice", "POST", "/remote-agents", map[string]any{"name": "x", "card_url": "http://" + remoteHost + "/card"}); code != 400 {
		t.Fatalf("an http card: %d", code)
	}
}

// jsRemote is testdata/remote10.mjs running: its address, the roots
// that trust its certificate, and its lines.
type jsRemote struct {
	base  string
	roots *x509.CertPool
	lines chan map[string]any
	stdin io.Writer
}

func (r *jsRemote) next(t *testing.T, step string) map[string]any {
	t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok || l["step"] != step {
			t.Fatalf("the remote said %v; want %s", l, step)
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatalf("the remote said nothing; want %s", step)
	}
	return nil
}

// more is what the remote said that was not read yet.
func (r *jsRemote) more() []map[string]any {
	var out []map[string]any
	for {
		select {
		case l := <-r.lines:
			out = append(out, l)
		default:
			return out
		}
	}
}

func (r *jsRemote) say(line string) { io.WriteString(r.stdin, line+"\n") }

func startJSRemote(t *testing.T, modules string) *jsRemote {
	t.Helper()
	dir := t.TempDir()
	abs, err := filepath.Abs(modules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/remote10.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "remote10.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	roots := writeCert(t, dir)
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "remote10.mjs"))
	cmd.Env = append(os.Environ(), "REMOTE_HOST="+remoteHost, "REMOTE_CERT="+filepath.Join(dir, "cert.pem"), "REMOTE_KEY="+filepath.Join(dir, "key.pem"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &jsRemote{roots: roots, lines: make(chan map[string]any, 100), stdin: stdin}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l map[string]any
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				r.lines <- l
			}
		}
	}()
	port := r.next(t, "listening")["port"].(float64)
	r.base = "https://" + remoteHost + ":" + big.NewInt(int64(port)).String()
	return r
}

// writeCert writes a self-signed certificate for remoteHost, with its
// key, into dir, and returns roots that trust it.
func writeCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: remoteHost}, DNSNames: []string{remoteHost},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return roots
}

// loopbackResolver puts every name on 127.0.0.1.
type loopbackResolver struct{}

func (loopbackResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}
