package push_test

import (
	"net/netip"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/push/pushtest"
)

// world is a Sender that trusts the services' certificates and resolves
// their hosts to 127.0.0.1.
func world(rs ...*pushtest.Service) *push.Sender {
	return push.New(push.Options{RootCAs: pushtest.Roots(rs...), Resolver: pushtest.Loopback(rs...)})
}

// admitted is the guard a call to host gets when the admin let host
// through (palaver serve --allow-private-host): its loopback address is
// called. Every other address of the policy is judged as in production.
func admitted(host string) func(netip.Addr) bool {
	return egress.NewPolicy([]string{host}).Allows(host)
}
