// Package throttle counts attempts by key — an address, an account from
// an address, an account — each key with its own allowance (DESIGN.md
// §11.1, §15): failed sign-ins, accounts made, OAuth clients registered,
// client documents fetched. What is throttled, and how much, is the
// caller's rule.
package throttle

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A Throttle limits attempts by key, each key with its own allowance: a
// burst, then one more every so often. It keeps only keys that have spent
// some of their allowance, and only keys for what exists (accounts) or is
// scarce (addresses), so it stays small. The zero value is ready.
type Throttle struct {
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

// An Allowance is how many attempts a key has at once, and how soon one
// more.
type Allowance struct {
	Burst int
	Every time.Duration
}

// Take spends one attempt of the key at now and returns how to give it
// back (an attempt that succeeds costs nothing), or says how long until
// one is left. Spending before the password is checked keeps attempts
// made at once from all passing.
func (t *Throttle) Take(now time.Time, key string, a Allowance) (refund func(), wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys == nil {
		t.keys = map[string]*rate.Limiter{}
	}
	if len(t.keys) > 10000 { // forget the keys whose allowance is whole again
		for k, l := range t.keys {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(t.keys, k)
			}
		}
	}
	l := t.keys[key]
	if l == nil {
		l = rate.NewLimiter(rate.Every(a.Every), a.Burst)
		t.keys[key] = l
	}
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d
	}
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		r.CancelAt(now)
	}, 0
}

// TakeAll takes one attempt of each key, all or none.
func (t *Throttle) TakeAll(now time.Time, keys map[string]Allowance) (refund func(), wait time.Duration) {
	var refunds []func()
	refund = func() {
		for _, f := range refunds {
			f()
		}
	}
	for k, a := range keys {
		f, d := t.Take(now, k, a)
		if f == nil {
			refund()
			return nil, d
		}
		refunds = append(refunds, f)
	}
	return refund, 0
}

// AddressKey is what an address is throttled as: an IPv6 address by its
// /64, which one client commonly holds whole; anything else as it is.
func AddressKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Is4In6() {
		return addr
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}
