package egress_test

import (
	"net/netip"
	"testing"

	"github.com/palaverhq/palaver/internal/egress"
)

// edges are the first and the last address of a range.
func edges(p netip.Prefix) [2]netip.Addr {
	first := p.Masked().Addr()
	b := first.AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	last, _ := netip.AddrFromSlice(b)
	return [2]netip.Addr{first, last}
}

// TestCheckRegistries: every range that IANA's IPv4 and IPv6
// Special-Purpose Address Registries mark not globally reachable is
// refused, at its first and its last address — and so are multicast, the
// deprecated ranges and IPv6 outside 2000::/3; the ranges marked globally
// reachable inside refused ones, and global addresses, pass.
func TestCheckRegistries(t *testing.T) {
	notGlobal := []string{
		// IPv4 registry, Globally Reachable: False.
		"0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.170/32", "192.0.0.171/32",
		"192.0.2.0/24", "192.88.99.2/32", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		// Not in the registry but never a unicast host: multicast; and the
		// deprecated 6to4 relay anycast block.
		"224.0.0.0/4", "192.88.99.0/24",
		// IPv6 registry, Globally Reachable: False.
		"::1/128", "::/128", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64",
		"2001::/23", "2001:2::/48", "2001:db8::/32", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10",
		// Outside the global unicast space: IPv4-compatible, site-local,
		// multicast, unallocated.
		"::/96", "fec0::/10", "ff00::/8", "4000::/3", "8000::/1",
		// Entries the registry marks globally reachable (or neither) that
		// carry an IPv4 address: their edges carry 0.0.0.0 and
		// 255.255.255.255.
		"64:ff9b::/96", "2002::/16", "2001::/32",
	}
	for _, s := range notGlobal {
		for _, ip := range edges(netip.MustParsePrefix(s)) {
			if r := egress.Check(ip); r == nil {
				t.Errorf("%s (in %s) passes; want it refused", ip, s)
			}
		}
	}
	refused := map[string]string{
		"169.254.169.254":    "169.254.169.254, a link-local address (169.254.0.0/16)",
		"100.64.0.1":         "100.64.0.1, a shared (carrier-grade NAT) address (100.64.0.0/10)",
		"192.0.0.1":          "192.0.0.1, an IPv4 service continuity address (192.0.0.0/29)",
		"192.0.0.255":        "192.0.0.255, an IETF protocol assignment address (192.0.0.0/24)",
		"192.0.2.10":         "192.0.2.10, a documentation address (192.0.2.0/24)",
		"198.19.255.255":     "198.19.255.255, a benchmarking address (198.18.0.0/15)",
		"240.1.2.3":          "240.1.2.3, a reserved address (240.0.0.0/4)",
		"239.255.255.250":    "239.255.255.250, a multicast address (224.0.0.0/4)",
		"fe80::1%eth0":       "fe80::1, a link-local address (fe80::/10)",
		"4000::1":            "4000::1, an address outside the global unicast space (2000::/3)",
		"2001:db8::1":        "2001:db8::1, a documentation address (2001:db8::/32)",
		"64:ff9b:1::808:808": "64:ff9b:1::808:808, a local-use NAT64 address (64:ff9b:1::/48)",
		// Embedded IPv4, decoded before it is judged.
		"::127.0.0.1":                          "::7f00:1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)",
		"::ffff:127.0.0.1":                     "::ffff:127.0.0.1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)",
		"::ffff:10.1.2.3":                      "::ffff:10.1.2.3, which carries 10.1.2.3, a private-use address (10.0.0.0/8)",
		"64:ff9b::a9fe:a9fe":                   "64:ff9b::a9fe:a9fe, which carries 169.254.169.254, a link-local address (169.254.0.0/16)",
		"64:ff9b::7f00:1":                      "64:ff9b::7f00:1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)",
		"64:ff9b:1::a9fe:a9fe":                 "64:ff9b:1::a9fe:a9fe, which carries 169.254.169.254, a link-local address (169.254.0.0/16)",
		"2002:a00:1::1":                        "2002:a00:1::1, which carries 10.0.0.1, a private-use address (10.0.0.0/8)",
		"2002:c0a8:101:1::1":                   "2002:c0a8:101:1::1, which carries 192.168.1.1, a private-use address (192.168.0.0/16)",
		"2002:a9fe:a9fe::":                     "2002:a9fe:a9fe::, which carries 169.254.169.254, a link-local address (169.254.0.0/16)",
		"2001:0:4136:e378:8000:63bf:80ff:fffe": "2001:0:4136:e378:8000:63bf:80ff:fffe, which carries 127.0.0.1, a loopback address (127.0.0.0/8)",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": "2001:0:4136:e378:8000:63bf:3fff:fdd2, which carries 192.0.2.45, a documentation address (192.0.2.0/24)",
		"2001:0:a00:1:8000:63bf:f7f7:f7f7":     "2001:0:a00:1:8000:63bf:f7f7:f7f7, which carries 10.0.0.1, a private-use address (10.0.0.0/8)",
		"2001:0:4136:e378:8000:63bf:5601:5601": "2001:0:4136:e378:8000:63bf:5601:5601, which carries 169.254.169.254, a link-local address (169.254.0.0/16)",
	}
	for s, want := range refused {
		ip := netip.MustParseAddr(s)
		if r := egress.Check(ip); r == nil || r.String() != want {
			t.Errorf("Check(%s) = %v; want %q", s, r, want)
		}
	}
	global := []string{
		"8.8.8.8", "1.1.1.1", "93.184.215.14", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
		"191.255.255.255", "192.0.1.0", "192.0.3.0", "192.167.255.255", "192.169.0.0", "198.17.255.255",
		"198.20.0.0", "198.51.99.255", "203.0.114.0", "223.255.255.255",
		// Marked globally reachable inside ranges that are not.
		"192.0.0.9", "192.0.0.10", "192.31.196.1", "192.52.193.1", "192.175.48.1",
		"2001:1::1", "2001:1::2", "2001:1::3", "2001:3::1", "2001:4:112::1", "2001:20::1", "2001:30::1",
		"2620:4f:8000::1",
		// Global IPv6, and addresses that carry a global IPv4 one.
		"2606:4700::1", "2001:4860:4860::8888", "2001:200::1", "3fff:1000::1",
		"2a00:1450:4001:80b::200e", "3ffe::1", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7",
	}
	for _, s := range global {
		if r := egress.Check(netip.MustParseAddr(s)); r != nil {
			t.Errorf("Check(%s) = %s; want it globally reachable", s, r)
		}
	}
	if r := egress.Check(netip.Addr{}); r == nil || r.String() != "no address" {
		t.Errorf("Check of no address = %v; want refused", r)
	}
}

// TestPolicy: the admin's hosts are called at any address, others only at
// a globally reachable one; names are compared without case or a final
// dot.
func TestPolicy(t *testing.T) {
	p := egress.NewPolicy([]string{" Intranet.Example ", "10.0.0.5"})
	for _, tc := range []struct {
		host, ip string
		want     bool
	}{
		{"intranet.example", "192.168.1.20", true},
		{"INTRANET.example.", "127.0.0.1", true},
		{"10.0.0.5", "10.0.0.5", true},
		{"elsewhere.example", "192.168.1.20", false},
		{"elsewhere.example", "64:ff9b::c0a8:114", false},
		{"elsewhere.example", "93.184.215.14", true},
		{"intranet.example.evil", "10.0.0.1", false},
	} {
		if got := p.Allow(tc.host, netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Allow(%s, %s) = %v; want %v", tc.host, tc.ip, got, tc.want)
		}
	}
	if egress.NewPolicy(nil).Allow("intranet.example", netip.MustParseAddr("10.0.0.1")) {
		t.Error("a policy with no hosts let a private address through")
	}
}
