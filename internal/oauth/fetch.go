package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// fetchTimeout bounds a whole fetch of a client ID metadata document:
// connecting, TLS, headers and body.
const fetchTimeout = 5 * time.Second

// Fetcher fetches client ID metadata documents for the hub
// (hub.DocumentFetcher) without being turned against the server's own
// network: https only, every address it connects to is checked by the
// hub's rule at connect time (after DNS, so a name that resolves to a
// private address is refused too), no proxy, no redirects, a size cap and
// a timeout.
type Fetcher struct {
	// RootCAs are the certificates trusted for the documents' hosts; nil:
	// the system's.
	RootCAs *x509.CertPool
}

// Fetch implements hub.DocumentFetcher.
func (f *Fetcher) Fetch(ctx context.Context, url string, allow func(netip.Addr) bool, max int64) ([]byte, error) {
	dialer := &net.Dialer{Timeout: fetchTimeout, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !allow(ap.Addr()) {
			return fmt.Errorf("refusing to connect to %s: a private or special address", address)
		}
		return nil
	}}
	c := &http.Client{
		Timeout: fetchTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			TLSClientConfig:     &tls.Config{RootCAs: f.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: fetchTimeout,
			DisableKeepAlives:   true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("a client document is not fetched through a redirect")
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme != "https" {
		return nil, errors.New("only https is fetched")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("it answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("it is over %d bytes", max)
	}
	return body, nil
}
