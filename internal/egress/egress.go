// Package egress is the one outbound-address policy (policy.go) and the
// HTTP client with which the server calls addresses that others name —
// OAuth client ID metadata documents (DESIGN.md §10.6), webhooks (§18) and
// remote A2A cards — without being turned against its own network: https
// only, every address checked when connecting (the client resolves names
// itself and dials only the addresses its guard lets through, so a name
// that resolves to a private address is refused too), no proxy, no
// redirects, and a timeout.
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// ErrNotHTTPS is the error of a request to anything but an https URL.
var ErrNotHTTPS = errors.New("only https is called")

// errRedirect is the error of an answer that redirects.
var errRedirect = errors.New("redirects are not followed")

// Resolver looks up the addresses of a name (*net.Resolver is one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure Client.
type Options struct {
	// Allow is the guard: whether an address may be connected to (a
	// Policy's Allows for the host called). Nil allows nothing.
	Allow func(netip.Addr) bool
	// RootCAs are the certificates trusted; nil: the system's.
	RootCAs *x509.CertPool
	// Timeout bounds a whole call: connecting, TLS, headers and body.
	Timeout time.Duration
	// Resolver looks up host names; nil: net.DefaultResolver. Tests give
	// one of their own, so no name is looked up outside.
	Resolver Resolver
}

// RefusedError is the error of a call whose host has no address the guard
// lets through: Refusal says why the first one it named was refused.
type RefusedError struct {
	Host    string
	Refusal *Refusal
}

func (e *RefusedError) Error() string {
	return "refusing to connect to " + e.Host + ": it is at " + e.Refusal.String()
}

// Client returns a client for one call whose every connection goes only to
// an address o.Allow lets through, that follows no redirect and gives up
// after o.Timeout.
func Client(o Options) *http.Client {
	allow := o.Allow
	if allow == nil {
		allow = func(netip.Addr) bool { return false }
	}
	d := &dialer{allow: allow, resolver: o.Resolver, net: net.Dialer{Timeout: o.Timeout,
		// A second look at the very address connected to.
		Control: func(_, address string, _ syscall.RawConn) error {
			if ap, err := netip.ParseAddrPort(address); err != nil || !allow(ap.Addr()) {
				return &RefusedError{Host: address, Refusal: refusalOf(ap.Addr())}
			}
			return nil
		}}}
	if d.resolver == nil {
		d.resolver = net.DefaultResolver
	}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: httpsOnly{&http.Transport{
			Proxy:               nil,
			DialContext:         d.DialContext,
			TLSClientConfig:     &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: o.Timeout,
			DisableKeepAlives:   true,
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}
}

// dialer resolves a host itself and connects only to the addresses allow
// lets through, trying them in the resolver's order.
type dialer struct {
	allow    func(netip.Addr) bool
	resolver Resolver
	net      net.Dialer
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("the port %q is not a number", portText)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if found, err := d.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	} else {
		// A copy: the resolver's answer may be shared with other dials.
		for _, ip := range found {
			addrs = append(addrs, ip.Unmap()) // a resolver gives an IPv4 address as IPv4-mapped at times
		}
	}
	var refused *Refusal
	var last error
	for _, ip := range addrs {
		if !d.allow(ip) {
			if refused == nil {
				refused = refusalOf(ip)
			}
			continue
		}
		conn, err := d.net.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		last = err
	}
	switch {
	case last != nil:
		return nil, last
	case refused == nil:
		return nil, &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
	}
	return nil, &RefusedError{Host: host, Refusal: refused}
}

// refusalOf is why the guard refused ip: the policy's reason, or, for an
// address the policy would take but this guard does not, that it was not
// let through.
func refusalOf(ip netip.Addr) *Refusal {
	if r := Check(ip); r != nil {
		return r
	}
	return &Refusal{Addr: ip, Name: "an address this call may not reach"}
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
