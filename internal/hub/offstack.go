package hub

import "sync/atomic"

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
	work chan func() // taken by an idle reader
	idle atomic.Int32
}

// offStack is shared by every hub of the process: the goroutines hold
// nothing of any hub between reads.
var offStack = readers{work: make(chan func())}

// OffStack calls f on another goroutine, one kept for such calls, and
// returns when f has returned: what f calls grows that goroutine's stack,
// not the caller's. A panic of f is raised again on the caller's
// goroutine.
func OffStack(f func()) { offStack.run(f) }

func (r *readers) run(f func()) {
	done := make(chan struct{})
	var panicked any
	job := func() {
		defer close(done)
		defer func() { panicked = recover() }()
		f()
	}
	select {
	case r.work <- job: // an idle reader took it
	default:
		go r.reader(job)
	}
	<-done
	if panicked != nil {
		panic(panicked)
	}
}

// reader runs job, then the jobs it is handed while idle, until more than
// maxIdleReaders are idle.
func (r *readers) reader(job func()) {
	for {
		job()
		if r.idle.Add(1) > maxIdleReaders {
			r.idle.Add(-1)
			return
		}
		job = <-r.work
		r.idle.Add(-1)
	}
}
