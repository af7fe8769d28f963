// Package pushtest is the world outside that the tests of owner
// notifications (internal/push, and the dashboard's in internal/web) stand
// up for themselves: a push service (RFC 8030) or ntfy server of their own,
// on loopback under a name only their resolver knows; a browser's side of
// a Web Push subscription, which reads what is pushed to it (RFC 8291);
// and the check of the VAPID signature a push service is sent (RFC 8292).
// It is for tests only.
package pushtest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/push"
)

var b64 = base64.RawURLEncoding

// Request is one request a Service took.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Service is a TLS server on loopback whose certificate names Host, so it
// is called by that name, which only the test's resolver knows (Loopback)
// and only a client trusting Roots reaches. It keeps every request and
// answers each with its status.
type Service struct {
	Host string
	URL  string // https://Host:port

	srv     *httptest.Server
	arrived chan struct{} // rung (without blocking) on each request kept

	mu     sync.Mutex
	got    []Request
	status int
	hang   bool
}

// NewService starts a Service for t answering status; it ends with the
// test.
func NewService(t testing.TB, host string, status int) *Service {
	t.Helper()
	s := &Service{Host: host, status: status, arrived: make(chan struct{}, 1)}
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
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		if s.hang {
			s.mu.Unlock()
			<-req.Context().Done()
			return
		}
		s.got = append(s.got, Request{req.Method, req.URL.Path, req.Header.Clone(), body})
		status := s.status
		s.mu.Unlock()
		select {
		case s.arrived <- struct{}{}:
		default:
		}
		w.WriteHeader(status)
	}))
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	s.URL = "https://" + host + ":" + strconv.Itoa(s.srv.Listener.Addr().(*net.TCPAddr).Port)
	return s
}

// Answer makes the service answer status from now on.
func (s *Service) Answer(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

// Hang makes the service take no request from now on: each waits until
// its caller gives up.
func (s *Service) Hang() {
	s.mu.Lock()
	s.hang = true
	s.mu.Unlock()
}

// Requests is every request taken so far.
func (s *Service) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.got...)
}

// Last is the one request taken since the previous call, failing the test
// when there was not exactly one.
func (s *Service) Last(t testing.TB) Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) != 1 {
		t.Fatalf("%s took %d requests; want 1", s.Host, len(s.got))
	}
	got := s.got[0]
	s.got = nil
	return got
}

// Await waits, at most d, for the service to take a request, and is then
// Last: for a request a server sends on its own time (from its outbox).
func (s *Service) Await(t testing.TB, d time.Duration) Request {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		n := len(s.got)
		s.mu.Unlock()
		if n > 0 {
			return s.Last(t)
		}
		select {
		case <-s.arrived:
		case <-deadline.C:
			t.Fatalf("%s took no request in %s", s.Host, d)
		}
	}
}

// Roots trusts the services' certificates, and no other.
func Roots(ss ...*Service) *x509.CertPool {
	roots := x509.NewCertPool()
	for _, s := range ss {
		roots.AddCert(s.srv.Certificate())
	}
	return roots
}

// Names is a resolver that knows only the test's hosts, so no name is
// looked up outside.
type Names map[string][]netip.Addr

// LookupNetIP is the host's addresses, or no such host.
func (n Names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// Loopback resolves the services' hosts to 127.0.0.1, and no other.
func Loopback(ss ...*Service) Names {
	n := Names{}
	for _, s := range ss {
		n[s.Host] = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	return n
}

// Browser is the user agent's side of a subscription: its P-256 key pair
// and its authentication secret, made by the test.
type Browser struct {
	Key  *ecdh.PrivateKey
	Auth []byte
}

// NewBrowser makes a browser's keys.
func NewBrowser(t testing.TB) Browser {
	t.Helper()
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return Browser{key, auth}
}

// Subscription is the browser's subscription at endpoint, its keys in
// unpadded URL-safe base64 as PushSubscription.toJSON gives them.
func (b Browser) Subscription(endpoint string) push.Subscription {
	return push.Subscription{Endpoint: endpoint, P256dh: b64.EncodeToString(b.Key.PublicKey().Bytes()), Auth: b64.EncodeToString(b.Auth)}
}

func hmacSHA256(key []byte, data ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, d := range data {
		m.Write(d)
	}
	return m.Sum(nil)
}

// Decrypt is the browser's reading of an aes128gcm push message, written
// from RFC 8291 §3.3–3.4 and RFC 8188 §2 (each HKDF-Expand one HMAC
// block): the plaintext, or what is wrong with the message.
func (b Browser) Decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 || len(body) < 21+int(body[20]) {
		return nil, errors.New("shorter than its header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	asPublic, record := body[21:21+idlen], body[21+idlen:]
	if uint32(len(record)) > rs {
		return nil, fmt.Errorf("a record of %d bytes, over its record size %d (a push message is one record)", len(record), rs)
	}
	as, err := ecdh.P256().NewPublicKey(asPublic)
	if err != nil {
		return nil, fmt.Errorf("its keyid is not a P-256 key: %w", err)
	}
	secret, err := b.Key.ECDH(as)
	if err != nil {
		return nil, err
	}
	prkKey := hmacSHA256(b.Auth, secret)
	ikm := hmacSHA256(prkKey, []byte("WebPush: info\x00"), b.Key.PublicKey().Bytes(), asPublic, []byte{1})
	prk := hmacSHA256(salt, ikm)
	cek := hmacSHA256(prk, []byte("Content-Encoding: aes128gcm\x00\x01"))[:16]
	nonce := hmacSHA256(prk, []byte("Content-Encoding: nonce\x00\x01"))[:12]
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, err
	}
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		return nil, errors.New("the record does not end in the last record's delimiter, 2")
	}
	return plain[:i], nil
}

// CheckVAPID checks a VAPID Authorization header (RFC 8292 §2–3): the key
// is public, the server's public key; the JWT is signed with ES256 by it,
// its aud is the push service's origin, its exp in the future and at most
// 24 hours away, and its sub the subject.
func CheckVAPID(t testing.TB, header, public, aud, sub string) {
	t.Helper()
	params, ok := strings.CutPrefix(header, "vapid ")
	if !ok {
		t.Fatalf("Authorization %q is not vapid", header)
	}
	var token, k string
	for p := range strings.SplitSeq(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch name {
		case "t":
			token = value
		case "k":
			k = value
		}
	}
	if k != public {
		t.Errorf("vapid k = %q; want the server's public key %q", k, public)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("vapid t = %q is not a JWS", token)
	}
	decode := func(what, s string) []byte {
		t.Helper()
		b, err := b64.DecodeString(s)
		if err != nil {
			t.Fatalf("%s %q: %v", what, s, err)
		}
		return b
	}
	var head struct{ Alg, Typ string }
	if err := json.Unmarshal(decode("the JWT's header", parts[0]), &head); err != nil || head.Alg != "ES256" {
		t.Errorf("the JWT's header: %+v, %v; want alg ES256", head, err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), decode("the server's public key", public))
	if err != nil {
		t.Fatal(err)
	}
	sig := decode("the JWT's signature", parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Errorf("the JWT's signature does not verify against the server's public key")
	}
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	if err := json.Unmarshal(decode("the JWT's claims", parts[1]), &claims); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if claims.Aud != aud || claims.Sub != sub || claims.Exp <= now || claims.Exp > now+24*3600 {
		t.Errorf("the JWT's claims: %+v at %d; want aud %q, sub %q, exp within 24 h", claims, now, aud, sub)
	}
}
