package hub

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Request rate per token (§15): every request a token authenticates spends
// one from its token's bucket, which holds Settings.TokenBurst and refills
// at Settings.TokenRate a second. An agent makes a few requests a second
// and the busiest single token of `palaver bench` several hundred; the
// limit is there for a runaway loop fanned out over many connections.

// DefaultTokenRate and DefaultTokenBurst are the limit's defaults: requests
// a second per token, and how many may come at once.
const (
	DefaultTokenRate  = 1000
	DefaultTokenBurst = 2000
)

// sweepEvery is how often buckets that are full again are forgotten: a full
// bucket is the same as a new one, so memory holds only tokens used in the
// last minute or so.
const sweepEvery = time.Minute

// requestLimiter holds one bucket per token id.
type requestLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

// take spends n requests of key's bucket at now, or says how long until
// they are left; a refused request spends nothing.
func (l *requestLimiter) take(now time.Time, key string, n int, perSecond float64, burst int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buckets == nil {
		l.buckets = map[string]*rate.Limiter{}
	}
	if now.Sub(l.swept) >= sweepEvery {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(perSecond), burst)
		l.buckets[key] = b
	}
	if b.AllowN(now, n) {
		return 0
	}
	// What is missing of n requests, at the rate they come back.
	return time.Duration((float64(n) - b.TokensAt(now)) / perSecond * float64(time.Second))
}

// len is how many buckets are held.
func (l *requestLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// admit spends n requests of the token's allowance, or refuses with a
// KindRateLimited Error carrying retry_after_s (whole seconds, at least 1).
func (h *Hub) admit(tokenID string, now time.Time, n int) error {
	wait := h.requests.take(now, tokenID, n, h.settings.TokenRate, h.settings.TokenBurst)
	if wait <= 0 {
		return nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &Error{Kind: KindRateLimited, Details: map[string]any{"retry_after_s": secs},
		Msg: fmt.Sprintf("this token is over its request rate of %g a second (%d at once); try again in %d s, and make fewer calls at once",
			h.settings.TokenRate, h.settings.TokenBurst, secs)}
}

// SpendMore spends n more requests of a token (its id), for a request
// that carries n calls besides the one its authentication spent (a JSON-RPC
// batch): each call counts, however they are sent.
func (h *Hub) SpendMore(tokenID string, n int) error {
	if n <= 0 {
		return nil
	}
	return h.admit(tokenID, h.now(), n)
}
