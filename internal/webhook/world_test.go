package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/hubtest"
	"github.com/palaverhq/palaver/internal/webhook"
)

// receiver is a webhook endpoint over TLS on loopback that keeps every call
// it gets and answers with status.
type receiver struct {
	srv   *httptest.Server
	roots *x509.CertPool

	mu       sync.Mutex
	calls    []received
	status   int
	hold     chan struct{} // when not nil, a call waits for it to close
	held     chan struct{} // told when a call is waiting on hold
	came     chan struct{} // told of every call (buffered; a full one is not waited for)
	inFlight int           // calls being answered now
	most     int           // the most answered at once
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{status: http.StatusOK, came: make(chan struct{}, 16)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.calls = append(r.calls, received{req.Header.Clone(), body})
		status, hold, held := r.status, r.hold, r.held
		r.inFlight++
		r.most = max(r.most, r.inFlight)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.inFlight--
			r.mu.Unlock()
		}()
		if hold != nil {
			held <- struct{}{}
			<-hold
		}
		w.WriteHeader(status)
		select {
		case r.came <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.srv.Close)
	r.roots = x509.NewCertPool()
	r.roots.AddCert(r.srv.Certificate())
	return r
}

func (r *receiver) answer(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.calls...)
}

// resolver answers look-ups from a table.
type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

var ctx = context.Background()

// world is a hub on a test store (hubtest) with the webhooks of its hub,
// which send with sender (nil: they send nothing).
type world struct {
	*hubtest.World
	sender *webhook.Sender
	hooks  *webhook.Hooks
}

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{World: hubtest.Open(t, hub.DefaultSettings())}
	w.hooks = w.hooksOf(w.Hub, w.Store)
	return w
}

// newWorldOn is newWorld on db.
func newWorldOn(t testing.TB, db hub.Store) *world {
	t.Helper()
	w := &world{World: hubtest.OpenOn(t, hub.DefaultSettings(), db)}
	w.hooks = w.hooksOf(w.Hub, w.Store)
	return w
}

// hooksOf are the webhooks of h over db, sending with the world's sender.
func (w *world) hooksOf(h *hub.Hub, db hub.Store) *webhook.Hooks {
	return webhook.NewHooks(webhook.HooksOptions{Hub: h, Store: db, Sender: w.sender, Logger: slog.New(slog.DiscardHandler)})
}

// reopen starts the hub and its webhooks afresh over the world's store, as
// a server does when it starts.
func (w *world) reopen(t testing.TB) {
	t.Helper()
	w.Reopen(t)
	w.hooks = w.hooksOf(w.Hub, w.Store)
}

// hookWorld is a world whose hubs send webhooks with the real sender,
// trusting the receiver's certificate, its loopback address let through
// by the admin's allow-list (as palaver serve --allow-private-host
// 127.0.0.1 does), and names looked up in names.
func hookWorld(t *testing.T, r *receiver, names resolver, privateHosts ...string) *world {
	t.Helper()
	w := newWorld(t)
	sender, err := webhook.New(webhook.Options{RootCAs: r.roots})
	if err != nil {
		t.Fatal(err)
	}
	w.sender = sender
	w.Options = func(o *hub.Options) { o.PrivateHosts, o.Resolver = privateHosts, names }
	w.reopen(t)
	return w
}

// deliver runs one delivery pass and returns its outcomes.
func (w *world) deliver(t *testing.T) hub.Pass {
	t.Helper()
	pass, err := w.hooks.Deliver(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return pass
}

// verify checks a call's signature by hand (HMAC-SHA256 of id.timestamp.body
// keyed with the secret's bytes) and returns its payload.
func verify(t *testing.T, secret string, c received) hub.WebhookPayload {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") || len(key) < 24 {
		t.Fatalf("the secret %q is not whsec_ and base64 of enough bytes", secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(c.header.Get("webhook-id") + "." + c.header.Get("webhook-timestamp") + "." + string(c.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := c.header.Get("webhook-signature"); got != want || c.header.Get("webhook-id") == "" {
		t.Fatalf("webhook-signature %q, want %q (id %q)", got, want, c.header.Get("webhook-id"))
	}
	var p hub.WebhookPayload
	if err := json.Unmarshal(c.body, &p); err != nil {
		t.Fatalf("payload %s: %v", c.body, err)
	}
	return p
}

func outcomes(pass hub.Pass) map[string]int { return pass.Outcomes }
