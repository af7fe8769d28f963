// Package outbox dispatches the calls of a durable outbox (DESIGN.md §18,
// §19): a table of calls still to make, each to a target, written in the
// transaction that makes them, so a restart or a failover loses none. The
// hub owns what goes in an outbox and when; this package only makes the
// calls, each target apart.
package outbox

import (
	"context"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A Dispatcher, one per outbox in each process (a webhook endpoint is a
// target; so are a person's devices and topics, and remote A2A agents), keeps the targets apart:
// each has its own bounded set of calls in flight and its own rate, so a
// slow or dead target only ever holds up its own calls. One scheduler step
// (dispatch) asks which targets have calls due, claims for each only as
// many as it has room and rate for right now — a claim is a lease, so no
// other worker or replica makes those calls meanwhile — and starts each
// claimed call on its own goroutine. It waits for none of them: a call that
// ends frees its target's room and asks for another step when its target
// may have more due. A failed call is due again on the outbox's Backoff,
// and given up after Backoff.For. Nothing here knows what a call is: the
// outbox's user claims, sends and records.

// Backoff is a retry schedule: retry n waits First·2^(n-1), at most Max,
// moved at random by up to ±Jitter of itself; a call is retried until For
// after it was made — the last time at that moment — and then given up.
type Backoff struct {
	First, Max time.Duration
	Jitter     float64
	For        time.Duration
}

// Next is when a call made at created, whose attempt-th attempt failed at
// now, is tried again, r in [0, 1) drawing the jitter; false when it has
// been tried for long enough.
func (b Backoff) Next(created, now time.Time, attempt int, r float64) (time.Time, bool) {
	end := created.Add(b.For)
	if !now.Before(end) {
		return time.Time{}, false
	}
	d := b.First
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	d = time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*r))
	if at := now.Add(d); at.Before(end) {
		return at, true
	}
	return end, true
}

// Limits are what each target of an outbox is given.
type Limits struct {
	Concurrency int           // calls in flight to one target at once
	Rate        float64       // calls started a second to one target
	Burst       int           // calls started at once after a quiet spell, within Rate
	Lease       time.Duration // how long a claim holds a call: well over a call and its record
	Batch       int           // calls claimed in one step, across targets
	Retry       Backoff       // when a failed call is made again, and for how long
}

// A Row is a call in an outbox as its dispatcher sees it.
type Row interface {
	Target() string    // where it goes
	Queued() time.Time // when it was made: retried until Retry.For after
	Failed() int       // how many of its attempts failed
}

// An Attempt is how one attempt at a call went.
type Attempt interface {
	OK() bool // it got through: the call is done
}

// What became of an attempt, in every outbox.
const (
	Delivered = "delivered" // it got through: the call leaves the outbox
	Failed    = "failed"    // it did not: the call is made again later
	GaveUp    = "gave_up"   // it did not, and the call had been tried for Retry.For
)

// A Dispatcher makes one outbox's calls. Its functions are its user's:
//   - Due lists the targets with calls due at now, the longest waiting
//     first;
//   - Claim takes up to want[target] due calls of each target, leased
//     until until;
//   - Send makes one claimed call at at and says how it went; it returns
//     when ctx ends;
//   - Record writes what became of it — delivered (drop it), failed and
//     due again at retry, or given up — in one transaction.
type Dispatcher[R Row, A Attempt] struct {
	Name   string // for the log
	Limits Limits
	Now    func() time.Time
	Log    *slog.Logger
	Due    func(ctx context.Context, now time.Time) ([]string, error)
	Claim  func(ctx context.Context, now, until time.Time, want map[string]int) ([]R, error)
	Send   func(ctx context.Context, r R, at time.Time) A
	Record func(ctx context.Context, r R, a A, outcome string, retry time.Time) error

	// Kick asks for a step now: whoever queues the outbox's calls rings
	// it (nil: a Kick of its own, rung by Wake alone).
	Kick Kick

	once    sync.Once
	step    sync.Mutex     // one step at a time: a step alone spends the targets' rate
	running sync.WaitGroup // calls in flight

	mu      sync.Mutex
	targets map[string]*target
	swept   time.Time
}

// target is one target's share of the dispatcher.
type target struct {
	busy int           // calls in flight
	rate *rate.Limiter // calls started, on the outbox's clock
	more bool          // its last claim got all it asked for: more may be due
}

// A Pass is what one step claimed and, once Wait returns, what became of
// each call it started.
type Pass struct {
	Claimed int

	wg       sync.WaitGroup
	mu       sync.Mutex
	outcomes map[string]int
	errs     []error
}

// Wait returns, once every call the step started has ended, how many
// ended with each outcome (calls stopped by ctx count as none), and the
// errors of recording them.
func (p *Pass) Wait() (map[string]int, error) {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.outcomes, errors.Join(p.errs...)
}

// A Kick asks a Dispatcher for a step now rather than at its next tick:
// the code that queues calls in one package rings it, and the Dispatcher
// that makes them in another steps.
type Kick chan struct{}

// NewKick returns a Kick to ring.
func NewKick() Kick { return make(Kick, 1) }

// Ring asks for a step; a step already asked for is not asked twice.
func (k Kick) Ring() {
	select {
	case k <- struct{}{}:
	default:
	}
}

// Wake asks for a step now rather than at the next tick.
func (o *Dispatcher[R, A]) Wake() {
	o.init()
	o.Kick.Ring()
}

// init makes what a Dispatcher keeps, once.
func (o *Dispatcher[R, A]) init() {
	o.once.Do(func() {
		if o.Kick == nil {
			o.Kick = NewKick()
		}
		o.targets = map[string]*target{}
	})
}

// Dispatch is one scheduler step: it claims, for each target with calls
// due, as many as the target has room and rate for now, starts each, and
// returns without waiting for them; told, when not nil, hears each
// outcome as it comes. The calls run until they end or ctx does.
func (o *Dispatcher[R, A]) Dispatch(ctx context.Context, told func(outcome string)) (*Pass, error) {
	o.init()
	o.step.Lock()
	defer o.step.Unlock()
	pass := &Pass{outcomes: map[string]int{}}
	now := o.Now()
	due, err := o.Due(ctx, now)
	if err != nil || len(due) == 0 {
		return pass, err
	}
	want := map[string]int{}
	left := o.Limits.Batch
	o.mu.Lock()
	o.sweep(now)
	for _, id := range due {
		t := o.targets[id]
		if t == nil {
			t = &target{rate: rate.NewLimiter(rate.Limit(o.Limits.Rate), o.Limits.Burst)}
			o.targets[id] = t
		}
		if n := min(o.Limits.Concurrency-t.busy, int(t.rate.TokensAt(now)), left); n > 0 {
			want[id], left = n, left-n
		}
		if left == 0 {
			break
		}
	}
	o.mu.Unlock()
	if len(want) == 0 {
		return pass, nil
	}
	rows, err := o.Claim(ctx, now, now.Add(o.Limits.Lease), want)
	if err != nil {
		return pass, err
	}
	got := map[string]int{}
	o.mu.Lock()
	for _, r := range rows {
		t := o.targets[r.Target()]
		t.rate.AllowN(now, 1)
		t.busy++
		got[r.Target()]++
	}
	for id, n := range want {
		o.targets[id].more = got[id] == n
	}
	o.mu.Unlock()
	pass.Claimed = len(rows)
	for _, r := range rows {
		pass.wg.Add(1)
		o.running.Add(1)
		go o.call(ctx, o.targets[r.Target()], r, pass, told)
	}
	return pass, nil
}

// call makes one claimed call and records what became of it.
func (o *Dispatcher[R, A]) call(ctx context.Context, t *target, r R, pass *Pass, told func(string)) {
	defer func() {
		o.mu.Lock()
		t.busy--
		more := t.more
		o.mu.Unlock()
		pass.wg.Done()
		o.running.Done()
		if more {
			o.Wake()
		}
	}()
	a := o.Send(ctx, r, o.Now())
	if ctx.Err() != nil {
		return // stopping: its claim lapses and it is made again (at least once)
	}
	outcome, retry := Delivered, time.Time{}
	if !a.OK() {
		var again bool
		outcome = GaveUp
		if retry, again = o.Limits.Retry.Next(r.Queued(), o.Now(), r.Failed()+1, mrand.Float64()); again {
			outcome = Failed
		}
	}
	err := o.Record(ctx, r, a, outcome, retry)
	pass.mu.Lock()
	defer pass.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			o.Log.Warn("recording a call", "outbox", o.Name, "err", err)
		}
		pass.errs = append(pass.errs, err)
		return
	}
	pass.outcomes[outcome]++
	if told != nil {
		told(outcome)
	}
}

// sweepEvery is how often targets that are the same as new ones are
// forgotten.
const sweepEvery = time.Minute

// sweep forgets targets with nothing in flight whose rate is full again:
// such a target is the same as a new one. Called with mu held.
func (o *Dispatcher[R, A]) sweep(now time.Time) {
	if now.Sub(o.swept) < sweepEvery {
		return
	}
	for id, t := range o.targets {
		if t.busy == 0 && t.rate.TokensAt(now) >= float64(o.Limits.Burst) {
			delete(o.targets, id)
		}
	}
	o.swept = now
}

// Run steps until ctx ends, then waits for the calls in flight (which ctx
// stops): a step at once when asked (wake), again at once after a step
// that claimed a full batch, and every period otherwise — for calls
// queued elsewhere (other replicas, admin commands) and retries falling
// due. told hears each outcome, from the calls' goroutines.
func (o *Dispatcher[R, A]) Run(ctx context.Context, period time.Duration, told func(outcome string)) {
	o.init()
	defer o.running.Wait()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		pass, err := o.Dispatch(ctx, told)
		if err != nil && ctx.Err() == nil {
			o.Log.Warn("claiming calls", "outbox", o.Name, "err", err)
		}
		if err == nil && pass.Claimed == o.Limits.Batch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-o.Kick:
		}
	}
}
