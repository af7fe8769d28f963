package hub

import (
	"fmt"
	"time"

	"github.com/palaverhq/palaver/internal/throttle"
)

// Throttling (§11.1, §15): failed sign-ins and accounts made, counted per
// key by internal/throttle, each kind with its allowance here (OAuth
// registrations and document fetches: internal/oauth).

// The sign-in allowances (§11.1). A person mistyping from their own
// address is stopped after five; an address guessing across accounts after
// twenty (a shared address, such as a proxy's, has room for many people);
// an account guessed at from many addresses after fifty — so failures
// from elsewhere do not lock its owner out quickly.
var (
	perAccountAddress = throttle.Allowance{Burst: 5, Every: time.Minute}
	perAddress        = throttle.Allowance{Burst: 20, Every: 15 * time.Second}
	perAccount        = throttle.Allowance{Burst: 50, Every: time.Minute}
	signups           = throttle.Allowance{Burst: 5, Every: time.Minute} // accounts made from one address
)

// Throttled is the refusal while a key waits: what was attempted too
// often, and in how many seconds to try again.
func Throttled(what string, wait time.Duration) error {
	secs := max(1, int(wait.Round(time.Second)/time.Second))
	return &Error{Kind: KindRateLimited, Code: "throttled", Details: map[string]any{"retry_after_s": secs},
		Msg: fmt.Sprintf("too many %s; wait %d seconds and try again", what, secs)}
}
