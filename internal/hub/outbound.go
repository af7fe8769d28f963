package hub

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// URLs the server calls out to — webhook endpoints (internal/webhook),
// push services and ntfy topics — are checked when they are saved against
// the egress policy, their host looked up.

// Resolver looks up the addresses of a name (*net.Resolver is one): an
// endpoint's host is checked when it is saved.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolveTimeout bounds the look-up of an endpoint's host.
const resolveTimeout = 5 * time.Second

// Outbound is how checkOutboundURL names one kind of URL the server calls
// out to in what it says is wrong: what it is, an example, how they are
// sent, what to do instead of user info, and who reaches only global
// addresses.
type Outbound struct{ What, Example, Sent, UserInfo, Reach string }

// checkOutboundURL returns a URL the server will call out to (a webhook
// endpoint, a push service, an ntfy topic) as it is kept, or says what is
// wrong with it: absolute https, no user info or fragment, and a host
// whose every address the egress policy lets through. The sender checks
// each address again when it connects, as DNS changes.
func (h *Hub) checkOutboundURL(ctx context.Context, raw string, k Outbound) (string, error) {
	s, err := checkText("url", strings.TrimSpace(raw), 1, MaxURL)
	if err != nil {
		return "", err
	}
	u, err := url.Parse(s)
	bad := func(format string, args ...any) error {
		return invalid("", "the %s URL %q "+format, append([]any{k.What, echo(s)}, args...)...)
	}
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", bad("is not an absolute URL; give one like %s", k.Example)
	case u.Scheme != "https":
		return "", bad("is not https; %s over https only", k.Sent)
	case u.User != nil:
		return "", bad("has user info; %s", k.UserInfo)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "", bad("has a fragment")
	}
	host := u.Hostname()
	addrs := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, ip)
	} else {
		lctx, cancel := context.WithTimeout(ctx, resolveTimeout)
		addrs, err = h.resolver.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return "", bad("has a host, %s, that could not be resolved; give a host name that resolves, or an address", echo(host))
		}
		for i, ip := range addrs {
			addrs[i] = ip.Unmap() // a resolver gives an IPv4 address as IPv4-mapped at times
		}
	}
	for _, ip := range addrs {
		if r := h.egressPolicy.Refuse(host, ip); r != nil {
			return "", bad("is at %s; %s globally reachable addresses unless the server's admin lets the host %s through (its allow-private-host setting)", r, k.Reach, echo(host))
		}
	}
	return u.String(), nil
}

// CallError is how many code points of an outbound call's error its
// delivery log keeps: a webhook's, a notification's, a remote agent's.
const CallError = 300
