package hub

import (
	"testing"
	"time"
)

// TestAWaitWaitsForEventsHeldBackOnce: a wait that sees events held back
// waits until the transaction it saw has come out, and then not again for
// transactions held back after it looked (they come with the next wait),
// so a stream of new ones never keeps its events from it.
func TestAWaitWaitsForEventsHeldBackOnce(t *testing.T) {
	b := heldBack{now: time.Now}
	if b.waiting(0, Pos{Tx: 3, ID: 1}) {
		t.Fatal("waiting with nothing held back")
	}
	if !b.waiting(5, Pos{Tx: 3, ID: 1}) {
		t.Fatal("not waiting for transaction 5, held back")
	}
	if !b.waiting(5, Pos{Tx: 4, ID: 2}) {
		t.Fatal("stopped waiting before transaction 5 came out")
	}
	if b.waiting(7, Pos{Tx: 5, ID: 3}) {
		t.Fatal("transaction 5 came out, yet the wait waits again, for transaction 7 held back after it looked")
	}
}
