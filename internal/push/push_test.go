package push_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/push"
)

// received is one request a test server took.
type received struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// receiver is a TLS server on loopback whose certificate names host, so it
// is called by that name, which only the test's resolver knows. It keeps
// every request and answers each with its status.
type receiver struct {
	host string
	url  string // https://host:port
	srv  *httptest.Server

	mu     sync.Mutex
	got    []received
	status int
	hang   bool // take no request: each waits until its caller gives up
}

func newReceiver(t *testing.T, host string, status int) *receiver {
	t.Helper()
	r := &receiver{host: host, status: status}
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
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		if r.hang {
			r.mu.Unlock()
			<-req.Context().Done()
			return
		}
		r.got = append(r.got, received{req.Method, req.URL.Path, req.Header.Clone(), body})
		status := r.status
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	r.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	r.url = "https://" + host + ":" + strconv.Itoa(r.srv.Listener.Addr().(*net.TCPAddr).Port)
	return r
}

// answer makes the receiver answer status from now on.
func (r *receiver) answer(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

// requests is every request taken so far.
func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// last is the one request taken since the previous call, failing the test
// when there was not exactly one.
func (r *receiver) last(t *testing.T) received {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != 1 {
		t.Fatalf("%s took %d requests; want 1", r.host, len(r.got))
	}
	got := r.got[0]
	r.got = nil
	return got
}

// names is a resolver that knows only the test's hosts, all on loopback,
// so no name is looked up outside.
type names map[string][]netip.Addr

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// world is a Sender that trusts the receivers' certificates and resolves
// their hosts to 127.0.0.1.
func world(rs ...*receiver) *push.Sender {
	roots := x509.NewCertPool()
	n := names{}
	for _, r := range rs {
		roots.AddCert(r.srv.Certificate())
		n[r.host] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	return push.New(push.Options{RootCAs: roots, Resolver: n})
}

// admitted is the guard a call to host gets when the admin let host
// through (palaver serve --allow-private-host): its loopback address is
// called. Every other address of the policy is judged as in production.
func admitted(host string) func(netip.Addr) bool {
	return egress.NewPolicy([]string{host}).Allows(host)
}
