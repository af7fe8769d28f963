package egress_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
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
		resp, err := egress.Client(allow, roots, 5*time.Second).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	none := func(netip.Addr) bool { return false }
	all := func(netip.Addr) bool { return true }

	if _, err := get(none, srv.URL); err == nil || !strings.Contains(err.Error(), "private or special address") || hits.Load() != 0 {
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
