package httpx

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

// TestWrapRefusesUncleanPaths: a path with empty or dot segments is 404
// naming the clean path, for every method — never the redirect ServeMux
// would answer, which some clients follow without the POST's body or
// Authorization header; a clean path reaches the handler.
func TestWrapRefusesUncleanPaths(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served "+r.URL.Path) })
	srv := httptest.NewServer(Wrap(mux, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"POST", "/mcp/", 200, "served /mcp/"},
		{"POST", "/mcp", 200, "served /mcp"},
		{"POST", "/mcp//", 404, "nothing is served at /mcp//; did you mean /mcp/?\n"},
		{"POST", "//mcp/", 404, "nothing is served at //mcp/; did you mean /mcp/?\n"},
		{"POST", "/mcp/./", 404, "nothing is served at /mcp/./; did you mean /mcp/?\n"},
		{"POST", "/x/../mcp", 404, "nothing is served at /x/../mcp; did you mean /mcp?\n"},
		{"GET", "/.well-known//oauth-protected-resource", 404, "nothing is served at /.well-known//oauth-protected-resource; did you mean /.well-known/oauth-protected-resource?\n"},
	} {
		req, err := http.NewRequest(c.method, srv.URL, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Path = c.path // as sent, not cleaned by the client
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.body {
			t.Errorf("%s %s: %d %q, want %d %q", c.method, c.path, resp.StatusCode, b, c.status, c.body)
		}
	}
}

// TestClientAddr: a peer that is no proxy is the client, whatever
// X-Forwarded-For claims; behind a proxy on this machine or a trusted one,
// the nearest address X-Forwarded-For names that is not a proxy.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.7:5000", "", "203.0.113.7"},
		{"203.0.113.7:5000", "198.51.100.1", "203.0.113.7"}, // not a proxy: its header is not believed
		{"127.0.0.1:5000", "", "127.0.0.1"},
		{"127.0.0.1:5000", "198.51.100.1", "198.51.100.1"},
		{"[::1]:5000", "198.51.100.1", "198.51.100.1"},
		{"10.0.0.5:5000", "1.2.3.4, 198.51.100.1", "198.51.100.1"}, // the client may claim anything before the proxy's hop
		{"10.0.0.5:5000", "198.51.100.1, 10.0.0.9", "198.51.100.1"},
		{"10.0.0.5:5000", "junk", "10.0.0.5"},
		{"10.0.1.5:5000", "198.51.100.1", "10.0.1.5"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ClientAddr(r, trusted); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}

// TestLiteralHost: addresses and localhost names are literal hosts; any
// other name, however it looks, is not.
func TestLiteralHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8420": true, "[::1]:8420": true, "::1": true, "10.0.0.11:8420": true,
		"localhost": true, "LOCALHOST:8420": true, "app.localhost:8420": true,
		"evil.example": false, "evil.example:8420": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false, "": false,
	} {
		if got := LiteralHost(host); got != want {
			t.Errorf("LiteralHost(%q) = %t, want %t", host, got, want)
		}
	}
}

func TestKnownHost(t *testing.T) {
	for _, c := range []struct {
		base, host string
		want       bool
	}{
		{"", "127.0.0.1:8420", true}, {"", "palaver.example", false},
		{"palaver.example", "palaver.example", true}, {"palaver.example", "Palaver.Example", true},
		{"palaver.example", "127.0.0.1:8420", true}, {"palaver.example", "evil.example", false},
		{"palaver.example", "palaver.example:8443", false}, {"palaver.example:8443", "palaver.example:8443", true},
		{"palaver.example", "palaver.example:443", true}, {"palaver.example:443", "palaver.example", true},
	} {
		if got := KnownHost(c.base, c.host); got != c.want {
			t.Errorf("KnownHost(%q, %q) = %t, want %t", c.base, c.host, got, c.want)
		}
	}
}

// TestIDs: every response carries a request id of 16 hex digits, and a
// trace id is "tr_" and 16 hex digits; each is new every time.
func TestIDs(t *testing.T) {
	hexID := regexp.MustCompile(`^[0-9a-f]{16}$`)
	trace := regexp.MustCompile(`^tr_[0-9a-f]{16}$`)
	srv := httptest.NewServer(Wrap(http.NotFoundHandler(), slog.New(slog.DiscardHandler)))
	defer srv.Close()
	seen := map[string]bool{}
	for range 3 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		tr := NewTrace()
		if !hexID.MatchString(id) || !trace.MatchString(tr) || seen[id] || seen[tr] {
			t.Errorf("request id %q, trace %q: want 16 hex digits and tr_ with 16, each new", id, tr)
		}
		seen[id], seen[tr] = true, true
	}
}
