package outbox

import (
	"testing"
	"time"
)

// TestBackoffNext: retry n waits First·2^(n-1), at most Max, moved by the
// jitter; the last retry comes at For after the call was made, and none
// after it.
func TestBackoffNext(t *testing.T) {
	b := Backoff{First: 10 * time.Second, Max: time.Minute, Jitter: 0.5, For: 5 * time.Minute}
	made := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		now     time.Duration // after made
		attempt int
		r       float64
		want    time.Duration // after now; -1: given up
	}{
		{"first, no jitter", 0, 1, 0.5, 10 * time.Second},
		{"second doubles", 10 * time.Second, 2, 0.5, 20 * time.Second},
		{"at most Max", time.Minute, 6, 0.5, time.Minute},
		{"jitter down", 0, 1, 0, 5 * time.Second},
		{"jitter up", 0, 1, 0.999999, 15 * time.Second},
		{"the last, at For", 4*time.Minute + 30*time.Second, 9, 0.5, 30 * time.Second},
		{"after For: given up", 5 * time.Minute, 10, 0.5, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := made.Add(tc.now)
			at, again := b.Next(made, now, tc.attempt, tc.r)
			if tc.want < 0 {
				if again {
					t.Fatalf("retried at %v, want given up", at)
				}
				return
			}
			if got := at.Sub(now).Round(time.Second); !again || got != tc.want {
				t.Fatalf("next = %v after now (again %v), want %v", got, again, tc.want)
			}
		})
	}
}
