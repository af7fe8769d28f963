// Package egress makes the HTTP clients with which the server calls
// addresses that others name — OAuth client ID metadata documents
// (DESIGN.md §10.6) and webhooks (§18) — without being turned against its
// own network: https only, every address checked when connecting (after
// DNS, so a name that resolves to a private address is refused too), no
// proxy, no redirects, and a timeout. Which addresses are allowed is the
// hub's rule (hub.Hub.AllowFetch); this package only enforces it.
package egress

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrNotHTTPS is the error of a request to anything but an https URL.
var ErrNotHTTPS = errors.New("only https is called")

// Client returns a client for one call whose every connection goes only to
// an address allow lets through, trusting rootCAs (nil: the system's), that
// follows no redirect and gives up after timeout (connecting, TLS, headers
// and body together).
func Client(allow func(netip.Addr) bool, rootCAs *x509.CertPool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !allow(ap.Addr()) {
			return fmt.Errorf("refusing to connect to %s: a private or special address", address)
		}
		return nil
	}}
	return &http.Client{
		Timeout: timeout,
		Transport: httpsOnly{&http.Transport{
			Proxy:               nil,
			DialContext:         dialer.DialContext,
			TLSClientConfig:     &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: timeout,
			DisableKeepAlives:   true,
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("redirects are not followed")
		},
	}
}

// httpsOnly refuses every request that is not https before it is sent.
type httpsOnly struct{ next http.RoundTripper }

func (t httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, ErrNotHTTPS
	}
	return t.next.RoundTrip(r)
}
