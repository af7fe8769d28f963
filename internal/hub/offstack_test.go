package hub

import (
	"runtime"
	"testing"
)

// TestOffStackAllocatesNothing: a call of OffStack allocates nothing of
// its own (its call, the channel it waits on) once its goroutines are
// there: a wait's request makes several, whose garbage a parked wait's
// memory counts until a collection (§17).
func TestOffStackAllocatesNothing(t *testing.T) {
	f := func() {}
	OffStack(f)
	if n := testing.AllocsPerRun(100, func() { OffStack(f) }); n != 0 {
		t.Errorf("OffStack allocates %v times a call, want 0", n)
	}
}

// TestOffStackRaisesItsPanic: f runs on another goroutine, and its panic
// is raised again on the caller's; the next call runs as before.
func TestOffStackRaisesItsPanic(t *testing.T) {
	caller := goroutineID()
	var ran uint64
	func() {
		defer func() {
			if got := recover(); got != "boom" {
				t.Errorf("recovered %v, want boom", got)
			}
		}()
		OffStack(func() { ran = goroutineID(); panic("boom") })
		t.Error("OffStack returned after its f panicked")
	}()
	if ran == 0 || ran == caller {
		t.Errorf("f ran on goroutine %d, the caller's is %d", ran, caller)
	}
	done := false
	OffStack(func() { done = true })
	if !done {
		t.Error("the call after a panic did not run")
	}
}

// goroutineID reads the calling goroutine's id from its stack's header.
func goroutineID() uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	var id uint64
	for _, b := range buf[len("goroutine "):] {
		if b < '0' || b > '9' {
			break
		}
		id = id*10 + uint64(b-'0')
	}
	return id
}
