package hub

import (
	"sync"
	"sync/atomic"
)

// A parked wait costs its goroutine's stack for as long as it waits
// (§17), and a goroutine's stack grows to the deepest call it has made:
// the runtime halves it only at a collection, and only while less than a
// quarter of it is in use. A read of SQLite (C translated to Go, with
// deep frames) grows the reader's stack to tens of KiB, which a wait
// parked on that goroutine would then hold. So the reads of a wait — and
// of authentication, which every wait's request makes — run on a few
// goroutines of the hub's own (OffStack), kept for the next read, and the
// request's own goroutine only waits for them.

// maxIdleReaders is how many of those goroutines are kept idle; past it,
// one that finishes its read ends.
const maxIdleReaders = 16

// readers are the goroutines that run reads off the caller's stack.
type readers struct {
	work chan *offCall // taken by an idle reader
	idle atomic.Int32
}

// offStack is shared by every hub of the process: the goroutines hold
// nothing of any hub between reads.
var offStack = readers{work: make(chan *offCall)}

// offCall is one call of OffStack, kept for the next once it is over: a
// wait's request makes several, and what each allocated would otherwise
// stand as garbage, counted in a parked wait's memory until a collection.
type offCall struct {
	f        func()
	panicked any
	done     chan struct{} // one token when f has returned
}

var offCalls = sync.Pool{New: func() any { return &offCall{done: make(chan struct{}, 1)} }}

// OffStack calls f on another goroutine, one kept for such calls, and
// returns when f has returned: what f calls grows that goroutine's stack,
// not the caller's. A panic of f is raised again on the caller's
// goroutine.
func OffStack(f func()) { offStack.run(f) }

func (r *readers) run(f func()) {
	c := offCalls.Get().(*offCall)
	c.f = f
	select {
	case r.work <- c: // an idle reader took it
	default:
		go r.reader(c)
	}
	<-c.done
	panicked := c.panicked
	c.f, c.panicked = nil, nil
	offCalls.Put(c)
	if panicked != nil {
		panic(panicked)
	}
}

// call runs f, keeping a panic of it for the caller.
func (c *offCall) call() {
	defer func() {
		c.panicked = recover()
		c.done <- struct{}{}
	}()
	c.f()
}

// reader runs c, then the calls it is handed while idle, until more than
// maxIdleReaders are idle.
func (r *readers) reader(c *offCall) {
	for {
		c.call()
		if r.idle.Add(1) > maxIdleReaders {
			r.idle.Add(-1)
			return
		}
		c = <-r.work
		r.idle.Add(-1)
	}
}
