package hub

import (
	"fmt"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Throttling (§11.1, §15): failed sign-ins, and accounts made, counted per
// key — an address, an account from an address, an account — each with
// its own allowance.

// throttle limits failed sign-in attempts by key, each key with its own
// allowance: a burst, then one more every so often. It keeps only keys
// that have spent some of their allowance, and only keys for what exists
// (accounts) or is scarce (addresses), so it stays small.
type throttle struct {
	mu   sync.Mutex
	keys map[string]*rate.Limiter
}

// allowance is how many attempts a key has at once, and how soon one more.
type allowance struct {
	burst int
	every time.Duration
}

// The sign-in allowances (§11.1). A person mistyping from their own
// address is stopped after five; an address guessing across accounts after
// twenty (a shared address, such as a proxy's, has room for many people);
// an account guessed at from many addresses after fifty — so failures
// from elsewhere do not lock its owner out quickly.
var (
	perAccountAddress = allowance{5, time.Minute}
	perAddress        = allowance{20, 15 * time.Second}
	perAccount        = allowance{50, time.Minute}
	signups           = allowance{5, time.Minute}  // accounts made from one address
	registrations     = allowance{10, time.Minute} // OAuth clients registered from one address
	documentFetches   = allowance{10, time.Minute} // client metadata documents fetched for one address
)

// take spends one attempt of the key at now and returns how to give it
// back (an attempt that succeeds costs nothing), or says how long until
// one is left. Spending before the password is checked keeps attempts
// made at once from all passing.
func (t *throttle) take(now time.Time, key string, a allowance) (refund func(), wait time.Duration) {
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
		l = rate.NewLimiter(rate.Every(a.every), a.burst)
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

// takeAll takes one attempt of each key, all or none.
func (t *throttle) takeAll(now time.Time, keys map[string]allowance) (refund func(), wait time.Duration) {
	var refunds []func()
	refund = func() {
		for _, f := range refunds {
			f()
		}
	}
	for k, a := range keys {
		f, d := t.take(now, k, a)
		if f == nil {
			refund()
			return nil, d
		}
		refunds = append(refunds, f)
	}
	return refund, 0
}

// addressKey is what an address is throttled as: an IPv6 address by its
// /64, which one client commonly holds whole; anything else as it is.
func addressKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil || !a.Is6() || a.Is4In6() {
		return addr
	}
	return netip.PrefixFrom(a, 64).Masked().String()
}

// throttled is the refusal while a key waits: what was attempted too
// often, and in how many seconds to try again.
func throttled(what string, wait time.Duration) error {
	secs := max(1, int(wait.Round(time.Second)/time.Second))
	return &Error{Kind: KindRateLimited, Code: "throttled", Details: map[string]any{"retry_after_s": secs},
		Msg: fmt.Sprintf("too many %s; wait %d seconds and try again", what, secs)}
}
