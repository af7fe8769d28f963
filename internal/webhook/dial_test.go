package webhook_test

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/webhook"
)

// TestWebhookDialTime: an endpoint saved while its host resolved to a
// public address is called only if, when each call connects, the host
// still resolves to an address the egress policy lets through — a name
// that turns to a loopback address, plainly or inside an IPv6 one, is
// refused and the log says why; the admin's host is called at loopback.
// Names are looked up only by the test's resolvers.
func TestWebhookDialTime(t *testing.T) {
	r := newReceiver(t)
	port := r.srv.Listener.Addr().(*net.TCPAddr).Port
	endpoint := "https://hooks.test:" + strconv.Itoa(port) + "/hook"
	for _, tc := range []struct {
		name, atDial string
		private      []string
		says         string
	}{
		{"loopback", "127.0.0.1", nil, "refusing to connect to hooks.test: it is at 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"IPv4-mapped", "::ffff:127.0.0.1", nil, "refusing to connect to hooks.test: it is at 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"NAT64", "64:ff9b::7f00:1", nil, "it is at 64:ff9b::7f00:1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"6to4", "2002:7f00:1::1", nil, "it is at 2002:7f00:1::1, which carries 127.0.0.1, a loopback address (127.0.0.0/8)"},
		{"metadata", "169.254.169.254", nil, "it is at 169.254.169.254, a link-local address (169.254.0.0/16)"},
		// Connected to the receiver, whose certificate is not for the name:
		// it was reached at the loopback address the resolver gave.
		{"let through", "127.0.0.1", []string{"hooks.test"}, "certificate is valid for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			atSave := resolver{"hooks.test": {netip.MustParseAddr("93.184.215.14")}}
			atDial := resolver{"hooks.test": {netip.MustParseAddr(tc.atDial)}}
			w := newWorld(t)
			sender, err := webhook.New(webhook.Options{RootCAs: r.roots, Resolver: atDial})
			if err != nil {
				t.Fatal(err)
			}
			w.sender = sender
			w.Options = func(o *hub.Options) { o.Resolver, o.PrivateHosts = atSave, tc.private }
			w.reopen(t)
			alice := w.Person(t, "alice")
			if _, _, err := w.hooks.Add(ctx, alice, "planner", endpoint); err != nil {
				t.Fatalf("saving while the host resolves to a public address: %v", err)
			}
			conv := w.Direct(t, w.Reviewer, "alice/planner")
			w.Send(t, w.Reviewer, conv, "wake up")
			pass := w.deliver(t)
			if outcomes(pass)[webhook.Failed] == 0 || outcomes(pass)[webhook.Failed] != pass.Claimed || len(r.got()) != 0 {
				t.Fatalf("the pass: %+v, %d calls answered; want every call failed", pass, len(r.got()))
			}
			vs, err := w.hooks.List(ctx, alice, "planner")
			if err != nil || len(vs) != 1 || len(vs[0].Attempts) != pass.Claimed {
				t.Fatalf("the log: %+v %v", vs, err)
			}
			for _, a := range vs[0].Attempts {
				if !strings.Contains(a.Error, tc.says) {
					t.Errorf("an attempt's log says %q; want %q", a.Error, tc.says)
				}
			}
		})
	}
}
