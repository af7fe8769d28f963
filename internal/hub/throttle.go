package hub

import (
	"fmt"
	"time"
)

// Throttling (§11.1, §15) is counted by internal/throttle, with each
// kind's allowance where its rule is (sign-ins and sign-ups:
// internal/accounts; registrations and client documents: internal/oauth);
// the refusal is the hub's one, here.

// Throttled is the refusal while a key waits: what was attempted too
// often, and in how many seconds to try again.
func Throttled(what string, wait time.Duration) error {
	secs := max(1, int(wait.Round(time.Second)/time.Second))
	return &Error{Kind: KindRateLimited, Code: "throttled", Details: map[string]any{"retry_after_s": secs},
		Msg: fmt.Sprintf("too many %s; wait %d seconds and try again", what, secs)}
}
