package egress_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/egress"
)

// TestClient: a call reaches a loopback server only when allow lets its
// address through, is never made over plain http, and follows no redirect.
func TestClient(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	get := func(allow func(netip.Addr) bool, url string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		resp, err := egress.Client(egress.Options{Allow: allow, RootCAs: roots, Timeout: 5 * time.Second}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	none := func(netip.Addr) bool { return false }
	all := func(netip.Addr) bool { return true }

	if _, err := get(none, srv.URL); err == nil || !strings.Contains(err.Error(), "it is at 127.0.0.1, a loopback address") || hits.Load() != 0 {
		t.Errorf("a refused address: %v, %d calls; want refused before any call", err, hits.Load())
	}
	if resp, err := get(all, srv.URL); err != nil || resp.StatusCode != 200 || hits.Load() != 1 {
		t.Errorf("an allowed address: %v, %v, %d calls", resp, err, hits.Load())
	}
	plain := "http://" + strings.TrimPrefix(srv.URL, "https://")
	if _, err := get(all, plain); !errors.Is(err, egress.ErrNotHTTPS) || hits.Load() != 1 {
		t.Errorf("http: %v, %d calls; want ErrNotHTTPS and no call", err, hits.Load())
	}
	if _, err := get(all, srv.URL+"/moved"); err == nil || !strings.Contains(err.Error(), "redirects are not followed") || hits.Load() != 2 {
		t.Errorf("a redirect: %v, %d calls; want it not followed", err, hits.Load())
	}
}

// names is a resolver the test controls: it answers from its table and
// records what it was asked, so no name is ever looked up outside.
type names struct {
	mu    sync.Mutex
	table map[string][]netip.Addr
	asked []string
}

func (n *names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.asked = append(n.asked, host)
	if a, ok := n.table[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "10.9.9.9:53", IsNotFound: true}
}

// hostServer is a TLS server on loopback whose certificate names host, so
// it is called by that name (which only the test's resolver knows).
func hostServer(t *testing.T, host string, h http.Handler) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return srv, roots
}

// TestDialGuard: when it connects, the client resolves the host with its
// resolver and connects only to an address the policy lets through — not
// to a private address a name resolves to, nor to one hidden in an IPv6
// address (IPv4-mapped, NAT64, 6to4, Teredo) — and says why in words.
func TestDialGuard(t *testing.T) {
	var hits atomic.Int32
	srv, roots := hostServer(t, "hooks.test", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	url := "https://hooks.test:" + strconv.Itoa(port) + "/hook"
	loopback := netip.MustParseAddr("127.0.0.1")
	call := func(resolved []netip.Addr, allow func(netip.Addr) bool) (*names, error) {
		n := &names{table: map[string][]netip.Addr{"hooks.test": resolved}}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		resp, err := egress.Client(egress.Options{Allow: allow, RootCAs: roots, Timeout: 5 * time.Second, Resolver: n}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return n, err
	}
	public := egress.NewPolicy(nil).Allows("hooks.test")
	for _, tc := range []struct {
		resolved string
		says     string
	}{
		{"127.0.0.1", "its host is at 127.0.0.1, a loopback address (127.0.0.0/8), which this server does not call"},
		{"::ffff:127.0.0.1", "its host is at 127.0.0.1, a loopback address (127.0.0.0/8)"}, // as resolvers give IPv4 at times
		{"::127.0.0.1", "its host is at ::7f00:1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"64:ff9b::a9fe:a9fe", "its host is at 64:ff9b::a9fe:a9fe, which carries 169.254.169.254, a link-local address (169.254.0.0/16)"},
		{"2002:7f00:1::1", "its host is at 2002:7f00:1::1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "which carries 127.0.0.1, a loopback address"},
		{"192.0.2.1", "its host is at 192.0.2.1, a documentation address (192.0.2.0/24)"},
		{"198.18.0.1", "its host is at 198.18.0.1, a benchmarking address (198.18.0.0/15)"},
	} {
		n, err := call([]netip.Addr{netip.MustParseAddr(tc.resolved)}, public)
		var refused *egress.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(egress.Describe(err), tc.says) || hits.Load() != 0 {
			t.Errorf("resolved to %s: %v (%q), %d calls; want refused saying %q", tc.resolved, err, egress.Describe(err), hits.Load(), tc.says)
		}
		if len(n.asked) != 1 || n.asked[0] != "hooks.test" {
			t.Errorf("resolved to %s: the resolver was asked %v; want hooks.test once", tc.resolved, n.asked)
		}
	}
	// A name resolving to a refused address and to one let through is
	// called only at the latter.
	onlyLoopback := func(ip netip.Addr) bool { return ip == loopback }
	if _, err := call([]netip.Addr{netip.MustParseAddr("169.254.169.254"), loopback}, onlyLoopback); err != nil || hits.Load() != 1 {
		t.Errorf("a refused and an allowed address: %v, %d calls; want the allowed one called", err, hits.Load())
	}
	// The admin's host is called at its loopback address.
	if _, err := call([]netip.Addr{loopback}, egress.NewPolicy([]string{"hooks.test"}).Allows("hooks.test")); err != nil || hits.Load() != 2 {
		t.Errorf("a let-through host: %v, %d calls", err, hits.Load())
	}
	// A name that does not resolve says so, without the resolver's address.
	if _, err := call(nil, public); egress.Describe(err) != "its host name does not resolve to any address" || strings.Contains(egress.Describe(err), "10.9.9.9") {
		t.Errorf("no address: %v (%q)", err, egress.Describe(err))
	}
}

// TestDescribe: what a person is told of a failed call says what was
// wrong and holds no raw network error, resolver address or port.
func TestDescribe(t *testing.T) {
	refusedConn := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "x"}}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&net.DNSError{Err: "server misbehaving", Name: "x.example", Server: "127.0.0.53:53", IsTemporary: true}, "its host name could not be looked up (DNS did not answer); try again later"},
		{&net.DNSError{Err: "no such host", Name: "x.example", Server: "127.0.0.53:53", IsNotFound: true}, "its host name does not resolve to any address"},
		{context.DeadlineExceeded, "it did not answer in time"},
		{x509.UnknownAuthorityError{}, "its TLS certificate is not trusted (expired, self-signed, or from an unknown authority)"},
		{x509.HostnameError{Host: "x.example", Certificate: &x509.Certificate{}}, "its TLS certificate is not for its host"},
		{&egress.Error{Msg: "it answered 404 Not Found, not 200 OK"}, "it answered 404 Not Found, not 200 OK"},
		{refusedConn, "it could not be reached"},
	} {
		if got := egress.Describe(tc.err); got != tc.want {
			t.Errorf("Describe(%v) = %q; want %q", tc.err, got, tc.want)
		}
	}
}
