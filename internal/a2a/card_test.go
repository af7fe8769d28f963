package a2a_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/build"
)

// TestCardByVersion: an agent's card is A2A 0.3's, byte for byte as 0.3
// clients have always had it, for a request that names no A2A-Version or
// a 0.x; and A2A 1.0's for one that names 1.0 (or a later revision), its
// interfaces the one endpoint in 1.0 and then 0.3. Either way the answer
// says it varies by A2A-Version, and the owner's directory lists the same
// cards (§18).
func TestCardByVersion(t *testing.T) {
	ts := newTestServer(t)
	ts.expose(t)
	version := build.Current().Version
	if version == "" {
		version = "dev"
	}
	golden := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.NewReplacer("{{URL}}", ts.url, "{{VERSION}}", version).Replace(string(b))
	}
	card03, card10 := golden("card-0.3.json"), golden("card-1.0.json")
	cardURL := ts.url + "/a2a/alice/reviewer/.well-known/agent-card.json"
	for _, tc := range []struct {
		name, header, query, want string
	}{
		{"no A2A-Version", "", "", card03},
		{"A2A-Version 0.3", "0.3", "", card03},
		{"A2A-Version 0.3.0", "0.3.0", "", card03},
		{"A2A-Version 0.2", "0.2", "", card03},
		{"A2A-Version 1.0", "1.0", "", card10},
		{"A2A-Version 1.0.1", "1.0.1", "", card10},
		{"A2A-Version 1.1, a later revision", "1.1", "", card10},
		{"A2A-Version as a query parameter", "", "?A2A-Version=1.0", card10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", cardURL+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.header != "" {
				req.Header.Set("A2A-Version", tc.header)
			}
			resp, body := do(t, req)
			if resp.StatusCode != http.StatusOK || body != tc.want {
				t.Errorf("%d\n%s\nwant\n%s", resp.StatusCode, body, tc.want)
			}
			if got := resp.Header.Get("Vary"); got != "A2A-Version" {
				t.Errorf("Vary: %q, want A2A-Version", got)
			}
		})
	}

	req, _ := http.NewRequest("GET", ts.url+"/a2a/alice", nil)
	req.Header.Set("A2A-Version", "1.0")
	if _, body := do(t, req); body != `{"owner":"alice","agents":[`+strings.TrimSuffix(card10, "\n")+"]}\n" {
		t.Errorf("alice's directory in 1.0: %s", body)
	}
	req, _ = http.NewRequest("GET", ts.url+"/a2a/alice", nil)
	if _, body := do(t, req); body != `{"owner":"alice","agents":[`+strings.TrimSuffix(card03, "\n")+"]}\n" {
		t.Errorf("alice's directory in 0.3: %s", body)
	}
	req, _ = http.NewRequest("GET", ts.url+"/a2a/alice/planner/.well-known/agent-card.json", nil)
	req.Header.Set("A2A-Version", "1.0")
	if resp, body := do(t, req); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unexposed agent's 1.0 card: %d %s; want 404", resp.StatusCode, body)
	}
	// A browser's A2A client may send A2A-Version across origins.
	req, _ = http.NewRequest("OPTIONS", ts.url+"/a2a/alice/reviewer", nil)
	if resp, _ := do(t, req); !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "A2A-Version") {
		t.Errorf("preflight allows %q; want A2A-Version among them", resp.Header.Get("Access-Control-Allow-Headers"))
	}
}

// do makes a request and returns its response and body.
func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
