package throttle

import (
	"testing"
	"time"
)

// TestTake: a key has its burst at once, then one more each Every; a
// refunded attempt costs nothing; TakeAll spends every key or none.
func TestTake(t *testing.T) {
	var th Throttle
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a := Allowance{Burst: 2, Every: time.Minute}
	for i := range 2 {
		if refund, _ := th.Take(now, "k", a); refund == nil {
			t.Fatalf("attempt %d of a burst of 2 refused", i+1)
		}
	}
	refund, wait := th.Take(now, "k", a)
	if refund != nil || wait != time.Minute {
		t.Fatalf("the third attempt: refused %v, wait %v; want refused for a minute", refund == nil, wait)
	}
	if refund, _ := th.Take(now.Add(time.Minute), "k", a); refund == nil {
		t.Fatal("a minute later, no attempt again")
	} else {
		refund()
	}
	if refund, _ := th.Take(now.Add(time.Minute), "k", a); refund == nil {
		t.Fatal("a refunded attempt was spent")
	}
	if refund, _ := th.TakeAll(now, map[string]Allowance{"fresh": a, "k": a}); refund != nil {
		t.Fatal("TakeAll passed with one key spent")
	}
	if refund, _ := th.TakeAll(now, map[string]Allowance{"fresh": {Burst: 1, Every: time.Hour}}); refund == nil {
		t.Fatal("TakeAll's refused call spent the fresh key")
	}
}

// TestAddressKey: an IPv6 address counts as its /64; anything else as it is.
func TestAddressKey(t *testing.T) {
	for in, want := range map[string]string{
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "::ffff:192.0.2.7",
		"not an address":       "not an address",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}
