package a2aclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/a2aclient"
	"github.com/palaverhq/palaver/internal/egress"
)

// resolver answers every name with one address.
type resolver struct{ addr netip.Addr }

func (r resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{r.addr}, nil
}

// remote is a small A2A 1.0 agent on loopback: its card, SendMessage that
// answers with a working task, and GetTask that completes it.
type remote struct {
	srv   *httptest.Server
	mu    sync.Mutex
	sent  []string // the message ids it was sent
	card  string   // overrides the card when not ""
	auths []string
}

func newRemote(t *testing.T) *remote {
	r := &remote{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// base is the remote's address by a name the test's resolver answers.
func (r *remote) base() string {
	u, _ := url.Parse(r.srv.URL)
	return "https://example.com:" + u.Port()
}

func (r *remote) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auths = append(r.auths, req.Header.Get("Authorization"))
	if req.Method == http.MethodGet {
		if r.card != "" {
			w.Write([]byte(r.card))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "Weather", "description": "forecasts", "version": "1",
			"provider":            map[string]string{"organization": "Example", "url": "https://example.com"},
			"skills":              []map[string]any{{"id": "f", "name": "forecast", "description": "", "tags": []string{}}},
			"supportedInterfaces": []map[string]string{{"url": r.base() + "/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}, {"url": r.base() + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}})
		return
	}
	var call struct {
		Method string `json:"method"`
		Params struct {
			ID      string `json:"id"`
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		} `json:"params"`
	}
	json.NewDecoder(req.Body).Decode(&call)
	if req.URL.Path != "/rpc" || req.Header.Get("A2A-Version") != "1.0" {
		http.Error(w, "wrong interface", http.StatusBadRequest)
		return
	}
	var result any
	switch call.Method {
	case "SendMessage":
		r.sent = append(r.sent, call.Params.Message.MessageID)
		result = map[string]any{"task": map[string]any{"id": "t1", "contextId": "c1", "status": map[string]any{"state": "TASK_STATE_WORKING"}}}
	case "GetTask":
		result = map[string]any{"id": call.Params.ID, "contextId": "c1", "status": map[string]any{"state": "TASK_STATE_COMPLETED"},
			"artifacts": []map[string]any{{"artifactId": "a", "name": "forecast", "parts": []map[string]any{{"text": "sunny"}, {"data": map[string]any{"temp": 21}}}}}}
	}
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
}

func client(r *remote) *a2aclient.Client {
	pool := r.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return a2aclient.New(a2aclient.Options{RootCAs: pool, Resolver: resolver{netip.MustParseAddr("127.0.0.1")}})
}

// allowLoopback is a guard that lets example.com through at loopback, as
// --allow-private-host example.com would.
func allowLoopback(host string, ip netip.Addr) bool {
	return host == "example.com" || egress.Check(ip) == nil
}

func TestCardAndTask(t *testing.T) {
	r := newRemote(t)
	c := client(r)
	ctx := context.Background()
	card, err := c.FetchCard(ctx, r.base()+"/.well-known/agent-card.json", "Bearer s3cret", allowLoopback)
	if err != nil {
		t.Fatal(err)
	}
	if card.Name != "Weather" || card.Provider != "Example" || card.Version != "1.0" || card.Endpoint != r.base()+"/rpc" || len(card.Skills) != 1 || card.Skills[0] != "forecast" {
		t.Fatalf("card = %+v", card)
	}
	rep, err := c.Send(ctx, card, "Bearer s3cret", allowLoopback, "rmc_1", "cnv_1", "", "weather?")
	if err != nil {
		t.Fatal(err)
	}
	if rep.TaskID != "t1" || rep.State != a2aclient.StateWorking || rep.Done() {
		t.Fatalf("send = %+v", rep)
	}
	rep, err = c.GetTask(ctx, card, "Bearer s3cret", allowLoopback, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if rep.State != a2aclient.StateCompleted || rep.Text != "" || !rep.Done() || len(rep.Artifacts) != 1 || artifactText(rep.Artifacts[0]) != `a forecast "sunny" {"temp":21}` {
		t.Fatalf("get = %+v", rep)
	}
	if strings.Join(r.sent, ",") != "rmc_1" {
		t.Fatalf("sent %v", r.sent)
	}
	for _, a := range r.auths {
		if a != "Bearer s3cret" {
			t.Fatalf("authorization %q", a)
		}
	}
}

func TestCardRefusals(t *testing.T) {
	r := newRemote(t)
	c := client(r)
	ctx := context.Background()
	// The policy alone, with no host let through: example.com resolves to
	// loopback, which is refused before anything is sent.
	_, err := c.FetchCard(ctx, r.base()+"/card", "", func(_ string, ip netip.Addr) bool { return egress.Check(ip) == nil })
	var refused *egress.RefusedError
	if !errors.As(err, &refused) || len(r.auths) != 0 {
		t.Fatalf("err = %v, calls %d", err, len(r.auths))
	}
	if _, err := c.FetchCard(ctx, "http://example.com/card", "", allowLoopback); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("http: %v", err)
	}
	r.card = `{"name": "x", "pad": "` + strings.Repeat("a", a2aclient.MaxCard) + `"}`
	if _, err := c.FetchCard(ctx, r.base()+"/card", "", allowLoopback); err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("oversized: %v", err)
	}
	r.card = `{"name": "x", "supportedInterfaces": [{"url": "https://example.com/g", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}`
	if _, err := c.FetchCard(ctx, r.base()+"/card", "", allowLoopback); err == nil || !strings.Contains(err.Error(), "no JSON-RPC") {
		t.Fatalf("grpc only: %v", err)
	}
	r.card = `{"name": "old", "protocolVersion": "0.3.0", "url": "https://example.com/v03"}`
	card, err := c.FetchCard(ctx, r.base()+"/card", "", allowLoopback)
	if err != nil || card.Version != "0.3" || card.Endpoint != "https://example.com/v03" {
		t.Fatalf("0.3 card: %+v %v", card, err)
	}
}

// TestVersion03: an agent whose card offers only A2A 0.3 is called with
// 0.3's methods and shapes (message/send, not waiting; tasks/get), and
// no A2A-Version header, as 0.3 has none.
func TestVersion03(t *testing.T) {
	var methods []string
	var params []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&call)
		methods, params = append(methods, call.Method+" "+r.Header.Get("A2A-Version")), append(params, string(call.Params))
		var result any
		switch call.Method {
		case "message/send":
			result = map[string]any{"kind": "task", "id": "t3", "contextId": "c", "status": map[string]any{"state": "working"}}
		case "tasks/get":
			result = map[string]any{"kind": "task", "id": "t3", "contextId": "c", "status": map[string]any{"state": "completed"},
				"artifacts": []map[string]any{{"artifactId": "a", "parts": []map[string]any{{"kind": "text", "text": "done in 0.3"}, {"kind": "data", "data": map[string]any{"temp": 21}}}}}}
		}
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	c := a2aclient.New(a2aclient.Options{RootCAs: pool, Resolver: resolver{netip.MustParseAddr("127.0.0.1")}})
	card := &a2aclient.Card{Endpoint: "https://example.com:" + u.Port() + "/rpc", Version: "0.3"}
	rep, err := c.Send(context.Background(), card, "", allowLoopback, "rmc_3", "conv_3", "", "hi")
	if err != nil || rep.State != a2aclient.StateWorking || rep.TaskID != "t3" {
		t.Fatalf("send: %+v %v", rep, err)
	}
	rep, err = c.GetTask(context.Background(), card, "", allowLoopback, "t3")
	if err != nil || rep.State != a2aclient.StateCompleted || len(rep.Artifacts) != 1 || artifactText(rep.Artifacts[0]) != `a  "done in 0.3" {"temp":21}` {
		t.Fatalf("get: %+v %v", rep, err)
	}
	if strings.Join(methods, ",") != "message/send ,tasks/get " || !strings.Contains(params[0], `"blocking":false`) ||
		!strings.Contains(params[0], `"messageId":"rmc_3"`) || !strings.Contains(params[0], `"kind":"text"`) {
		t.Fatalf("calls %v %v", methods, params)
	}
}

// artifactText is an artifact in one line: its id, name, quoted text and
// data.
func artifactText(a a2aclient.Artifact) string {
	var data []string
	for _, d := range a.Data {
		data = append(data, string(d))
	}
	return fmt.Sprintf("%s %s %q %s", a.ID, a.Name, a.Text, strings.Join(data, " "))
}
