package cli

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/palaverhq/palaver/internal/a2aclient"
)

// TestAgentRemoteCommands (§18, "Out"): palaver agent remote add reads the
// card (through the egress guard: a loopback card is refused unless
// --allow-private-host names its host, and nothing is added), presents the
// credential file's credential, and the remote agent becomes OWNER/NAME;
// list shows its card and never the credential; remove ends it.
func TestAgentRemoteCommands(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var auths []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		base := "https://" + r.Host
		json.NewEncoder(w).Encode(map[string]any{"name": "Weather", "description": "forecasts", "version": "1",
			"provider":            map[string]string{"organization": "Example", "url": "https://example.com"},
			"skills":              []map[string]any{{"id": "f", "name": "forecast", "description": "", "tags": []string{}}},
			"supportedInterfaces": []map[string]string{{"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}})
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	was := newRemoteClient
	newRemoteClient = func() *a2aclient.Client { return a2aclient.New(a2aclient.Options{RootCAs: roots}) }
	t.Cleanup(func() { newRemoteClient = was })

	dir := t.TempDir()
	db := filepath.Join(dir, "palaver.db")
	for _, args := range [][]string{{"migrate"}, {"user", "create", "alice"}} {
		if code, _, stderr := run(t, ctx, nil, append(args, "--database", db)...); code != 0 {
			t.Fatalf("palaver %v: %d %s", args, code, stderr)
		}
	}
	credFile := filepath.Join(dir, "credential")
	if err := os.WriteFile(credFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cardURL := srv.URL + "/.well-known/agent-card.json"
	add := []string{"agent", "remote", "add", cardURL, "--user", "alice", "--name", "weather", "--credential-file", credFile, "--database", db}
	list := []string{"agent", "remote", "list", "--user", "alice", "--database", db}

	if code, _, stderr := run(t, ctx, nil, add...); code != 1 || !strings.Contains(stderr, "loopback") || !strings.Contains(stderr, "nothing was added") {
		t.Errorf("a loopback card without --allow-private-host: exit %d, %q; want it refused", code, stderr)
	}
	if _, stdout, _ := run(t, ctx, nil, list...); strings.Contains(stdout, "alice/weather") {
		t.Errorf("a refused card was added:\n%s", stdout)
	}
	code, stdout, stderr := run(t, ctx, map[string]string{"PALAVER_ALLOW_PRIVATE_HOSTS": "127.0.0.1"}, add...)
	want := `added alice/weather: "Weather" by Example, called over A2A 1.0 at ` + srv.URL + `/rpc; alice's agents may talk to it now, other owners' agents only through a grant
The server must be given the same --allow-private-host to call it.
`
	if code != 0 || stdout != want {
		t.Fatalf("add: exit %d, %q %q; want %q", code, stdout, stderr, want)
	}
	mu.Lock()
	if len(auths) != 1 || auths[0] != "Bearer s3cret" {
		t.Errorf("the card was read with Authorization %q; want the file's credential as a bearer token, once", auths)
	}
	mu.Unlock()
	code, stdout, _ = run(t, ctx, nil, list...)
	if code != 0 || !strings.Contains(stdout, "alice/weather  Weather  Example   forecast  "+cardURL+"  1.0  kept ") || strings.Contains(stdout, "s3cret") {
		t.Errorf("list: exit %d:\n%s", code, stdout)
	}
	if code, _, stderr := run(t, ctx, nil, "agent", "remote", "remove", "--user", "alice", "nobody", "--database", db); code != 1 || !strings.Contains(stderr, `no remote agent named "nobody"`) {
		t.Errorf("removing one not there: exit %d, %q", code, stderr)
	}
	if code, stdout, stderr := run(t, ctx, nil, "agent", "remote", "remove", "--user", "alice", "weather", "--database", db); code != 0 || !strings.HasPrefix(stdout, "removed alice/weather: ") {
		t.Errorf("remove: exit %d, %q %q", code, stdout, stderr)
	}
	if _, stdout, _ := run(t, ctx, nil, list...); strings.Contains(stdout, "alice/weather") {
		t.Errorf("after remove, list has it:\n%s", stdout)
	}
}
