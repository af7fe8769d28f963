package egress

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// The one outbound-address policy (DESIGN.md §10.6 client documents, §18
// webhooks and remote A2A cards): an address is called only when it is
// globally reachable — judged by IANA's IPv4 and IPv6 Special-Purpose
// Address Registries (RFC 6890), with the IPv4 address that NAT64, 6to4,
// Teredo, IPv4-mapped and IPv4-compatible addresses carry judged too — or
// when the admin let its host through (`palaver serve
// --allow-private-host`).

// special is one range of the tables below: what the registry calls it,
// and whether the registry marks it globally reachable. The most specific
// range an address is in decides, so a globally reachable entry inside
// one that is not (192.0.0.9/32 in 192.0.0.0/24) lets its addresses
// through.
type special struct {
	prefix netip.Prefix
	name   string
	global bool
}

func ranges(rows ...any) []special {
	out := make([]special, 0, len(rows)/3)
	for i := 0; i < len(rows); i += 3 {
		out = append(out, special{netip.MustParsePrefix(rows[i].(string)), rows[i+1].(string), rows[i+2].(bool)})
	}
	return out
}

// specialIPv4 is the IPv4 registry's every entry, as of its 2025 update,
// with 224.0.0.0/4 (multicast, which no TCP connection reaches) and the
// deprecated 6to4 relay anycast block, which the registry no longer marks
// either way. Every other IPv4 address is globally reachable.
var specialIPv4 = ranges(
	"0.0.0.0/0", "", true,
	"0.0.0.0/8", "this-network", false, // RFC 791; 0.0.0.0/32 "this host" within it
	"10.0.0.0/8", "private-use", false, // RFC 1918
	"100.64.0.0/10", "shared (carrier-grade NAT)", false, // RFC 6598
	"127.0.0.0/8", "loopback", false, // RFC 1122
	"169.254.0.0/16", "link-local", false, // RFC 3927; cloud metadata services live here
	"172.16.0.0/12", "private-use", false,
	"192.0.0.0/24", "IETF protocol assignment", false, // RFC 6890
	"192.0.0.0/29", "IPv4 service continuity", false, // RFC 7335
	"192.0.0.8/32", "IPv4 dummy", false, // RFC 7600
	"192.0.0.9/32", "port control protocol anycast", true, // RFC 7723
	"192.0.0.10/32", "TURN anycast", true, // RFC 8155
	"192.0.0.170/31", "NAT64/DNS64 discovery", false, // RFC 7050: .170 and .171
	"192.0.2.0/24", "documentation", false, // RFC 5737 TEST-NET-1
	"192.31.196.0/24", "AS112", true, // RFC 7535
	"192.52.193.0/24", "AMT", true, // RFC 7450
	"192.88.99.0/24", "deprecated 6to4 relay anycast", false, // RFC 7526
	"192.88.99.2/32", "6a44 relay anycast", false, // RFC 6751
	"192.168.0.0/16", "private-use", false,
	"192.175.48.0/24", "AS112 direct delegation", true, // RFC 7534
	"198.18.0.0/15", "benchmarking", false, // RFC 2544
	"198.51.100.0/24", "documentation", false, // TEST-NET-2
	"203.0.113.0/24", "documentation", false, // TEST-NET-3
	"224.0.0.0/4", "multicast", false, // RFC 5771
	"240.0.0.0/4", "reserved", false, // RFC 1112
	"255.255.255.255/32", "limited broadcast", false, // RFC 919
)

// specialIPv6 is the IPv6 registry's every entry, as of its 2025 update,
// inside the rule that only 2000::/3 is global unicast space (the IPv6
// Address Space registry reserves the rest; ff00::/8 is multicast).
// Entries the registry marks neither way are decided by the IPv4 address
// they carry (6to4, Teredo) or, deprecated, refused (ORCHID, within
// 2001::/23).
var specialIPv6 = ranges(
	"::/0", "outside the global unicast space (2000::/3)", false,
	"2000::/3", "", true,
	"::/128", "unspecified", false, // RFC 4291
	"::1/128", "loopback", false,
	"::/96", "IPv4-compatible (deprecated)", false, // RFC 4291 §2.5.5.1
	"64:ff9b::/96", "NAT64", true, // RFC 6052: decided by the IPv4 address it carries
	"64:ff9b:1::/48", "local-use NAT64", false, // RFC 8215
	"100::/64", "discard-only", false, // RFC 6666
	"100:0:0:1::/64", "dummy IPv6 prefix", false, // RFC 9780
	"2001::/23", "IETF protocol assignment", false, // RFC 2928
	"2001::/32", "Teredo", true, // RFC 4380: decided by the IPv4 addresses it carries
	"2001:1::1/128", "port control protocol anycast", true,
	"2001:1::2/128", "TURN anycast", true,
	"2001:1::3/128", "DNS-SD service registration anycast", true, // RFC 9665
	"2001:2::/48", "benchmarking", false, // RFC 5180
	"2001:3::/32", "AMT", true,
	"2001:4:112::/48", "AS112", true, // RFC 7535
	"2001:20::/28", "ORCHIDv2", true, // RFC 7343
	"2001:30::/28", "drone remote ID", true, // RFC 9374
	"2001:db8::/32", "documentation", false, // RFC 3849
	"2002::/16", "6to4", true, // RFC 3056: decided by the IPv4 address it carries
	"2620:4f:8000::/48", "AS112 direct delegation", true, // RFC 7534
	"3fff::/20", "documentation", false, // RFC 9637
	"5f00::/16", "segment routing (SRv6) SID", false, // RFC 9602
	"fc00::/7", "unique-local", false, // RFC 4193
	"fe80::/10", "link-local", false, // RFC 4291
	"ff00::/8", "multicast", false,
)

// lookup is the most specific range of table that holds ip.
func lookup(table []special, ip netip.Addr) special {
	best := special{prefix: netip.Prefix{}}
	for _, s := range table {
		if s.prefix.Contains(ip) && (!best.prefix.IsValid() || s.prefix.Bits() > best.prefix.Bits()) {
			best = s
		}
	}
	return best
}

// Refusal says why an address is not called: the address, and the range
// it is in; or, for an address that carries an IPv4 address (NAT64, 6to4,
// Teredo, IPv4-mapped, IPv4-compatible), the IPv4 address and its range.
type Refusal struct {
	Addr   netip.Addr   // invalid when there was no address to judge
	Via    netip.Addr   // the IPv4 address Addr carries, when it is the one refused
	Prefix netip.Prefix // the range of Via, or of Addr
	Name   string       // what the registry calls the range ("loopback", "documentation")
}

// String is the refusal in words for people: "10.1.2.3, a private-use
// address (10.0.0.0/8)", or "64:ff9b::a9fe:a9fe, which carries
// 169.254.169.254, a link-local address (169.254.0.0/16)".
func (r *Refusal) String() string {
	if !r.Addr.IsValid() {
		return "no address"
	}
	what := r.Name
	switch {
	case r.Prefix.IsValid() && r.Prefix.Bits() == 0:
		what = "an address " + r.Name
	case r.Prefix.IsValid():
		what = article(r.Name) + " " + r.Name + " address (" + r.Prefix.String() + ")"
	}
	if r.Via.IsValid() {
		return fmt.Sprintf("%s, which carries %s, %s", r.Addr, r.Via, what)
	}
	return fmt.Sprintf("%s, %s", r.Addr, what)
}

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiouAEIOU", rune(s[0])) {
		return "an"
	}
	return "a"
}

// Check says why ip is not globally reachable, or nil when it is (every
// range IANA's special-purpose registries mark not globally reachable is
// refused, after the IPv4 address an IPv6 one carries is judged too).
// An IPv6 zone is ignored.
func Check(ip netip.Addr) *Refusal {
	if !ip.IsValid() {
		return &Refusal{}
	}
	ip = ip.WithZone("")
	if ip.Is4In6() { // IPv4-mapped: it is the IPv4 address that is dialled
		if r := check4(ip.Unmap()); r != nil {
			r.Addr, r.Via = ip, ip.Unmap()
			return r
		}
		return nil
	}
	if ip.Is4() {
		return check4(ip)
	}
	for _, v4 := range carried(ip) {
		if r := check4(v4); r != nil {
			r.Addr, r.Via = ip, v4
			return r
		}
	}
	if s := lookup(specialIPv6, ip); !s.global {
		return &Refusal{Addr: ip, Prefix: s.prefix, Name: s.name}
	}
	return nil
}

func check4(ip netip.Addr) *Refusal {
	if s := lookup(specialIPv4, ip); !s.global {
		return &Refusal{Addr: ip, Prefix: s.prefix, Name: s.name}
	}
	return nil
}

// Public reports whether ip is globally reachable (Check finds nothing).
func Public(ip netip.Addr) bool { return Check(ip) == nil }

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
	compatible = netip.MustParsePrefix("::/96")
)

// carried is the IPv4 addresses an IPv6 address carries: the last 32 bits
// of a NAT64 address (RFC 6052; the local-use prefix read the same way,
// as its /96 is the common use), bits 16–47 of a 6to4 one (RFC 3056), a
// Teredo address's server (bits 32–63) and its client (the last 32 bits
// inverted, RFC 4380 §4), and the last 32 bits of an IPv4-compatible one
// (not :: or ::1, which are their own entries).
func carried(ip netip.Addr) []netip.Addr {
	b := ip.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case nat64.Contains(ip), nat64Local.Contains(ip):
		return []netip.Addr{last}
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	case compatible.Contains(ip) && ip.Compare(netip.IPv6Loopback()) > 0:
		return []netip.Addr{last}
	}
	return nil
}

// Policy is the outbound-address rule with the admin's exception: a
// globally reachable address of any host, and any address of a host the
// admin let through (Options.PrivateHosts, `--allow-private-host`). Its
// zero value lets no host through.
type Policy struct {
	hosts []string // lower case
}

// NewPolicy is the policy that lets hosts (compared without case) be
// called at any address.
func NewPolicy(hosts []string) Policy {
	p := Policy{}
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), ".")); h != "" {
			p.hosts = append(p.hosts, h)
		}
	}
	return p
}

// Refuse says why host may not be called at ip, or nil when it may.
func (p Policy) Refuse(host string, ip netip.Addr) *Refusal {
	r := Check(ip)
	if r == nil || !ip.IsValid() {
		return r
	}
	if slices.Contains(p.hosts, strings.ToLower(strings.TrimSuffix(host, "."))) {
		return nil
	}
	return r
}

// Allow reports whether host may be called at ip.
func (p Policy) Allow(host string, ip netip.Addr) bool { return p.Refuse(host, ip) == nil }

// Allows is Allow for one host, as the connection guards take it.
func (p Policy) Allows(host string) func(netip.Addr) bool {
	return func(ip netip.Addr) bool { return p.Allow(host, ip) }
}
