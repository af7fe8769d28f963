package httpx

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

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
