package hub

import (
	"context"
	"errors"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// An outbox is a table of calls still to make, each to a target — a
// webhook endpoint now (§18); owner notifications' devices and topics and
// remote A2A agents are to use it too (§19, §18) — written in the
// transaction that makes them, so a restart or a failover loses none.
//
// Its dispatcher, one per outbox in each process, keeps the targets apart:
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

// outboxLimits are what each target of an outbox is given.
type outboxLimits struct {
	Concurrency int           // calls in flight to one target at once
	Rate        float64       // calls started a second to one target
	Burst       int           // calls started at once after a quiet spell, within Rate
	Lease       time.Duration // how long a claim holds a call: well over a call and its record
	Batch       int           // calls claimed in one step, across targets
	Retry       Backoff       // when a failed call is made again, and for how long
}

// outboxRow is a call in an outbox as its dispatcher sees it.
type outboxRow interface {
	outboxTarget() string    // where it goes
	outboxQueued() time.Time // when it was made: retried until Retry.For after
	outboxFailed() int       // how many of its attempts failed
}

// outboxAttempt is how one attempt at a call went.
type outboxAttempt interface {
	OK() bool // it got through: the call is done
}

// What became of an attempt, in every outbox.
const (
	outcomeDelivered = "delivered" // it got through: the call leaves the outbox
	outcomeFailed    = "failed"    // it did not: the call is made again later
	outcomeGaveUp    = "gave_up"   // it did not, and the call had been tried for Retry.For
)

// outbox dispatches one outbox's calls. Its functions are its user's:
//   - due lists the targets with calls due at now, the longest waiting
//     first;
//   - claim takes up to want[target] due calls of each target, leased
//     until until;
//   - send makes one claimed call at at and says how it went; it returns
//     when ctx ends;
//   - record writes what became of it — delivered (drop it), failed and
//     due again at retry, or given up — in one transaction.
type outbox[R outboxRow, A outboxAttempt] struct {
	name   string // for the log
	limits outboxLimits
	now    func() time.Time
	log    *slog.Logger
	due    func(ctx context.Context, now time.Time) ([]string, error)
	claim  func(ctx context.Context, now, until time.Time, want map[string]int) ([]R, error)
	send   func(ctx context.Context, r R, at time.Time) A
	record func(ctx context.Context, r R, a A, outcome string, retry time.Time) error

	kick    chan struct{}  // a step is wanted now
	step    sync.Mutex     // one step at a time: a step alone spends the targets' rate
	running sync.WaitGroup // calls in flight

	mu      sync.Mutex
	targets map[string]*outboxTarget
	swept   time.Time
}

// outboxTarget is one target's share of the dispatcher.
type outboxTarget struct {
	busy int           // calls in flight
	rate *rate.Limiter // calls started, on the outbox's clock
	more bool          // its last claim got all it asked for: more may be due
}

// outboxPass is what one step claimed and, once wait returns, what became
// of each call it started.
type outboxPass struct {
	Claimed int

	wg       sync.WaitGroup
	mu       sync.Mutex
	outcomes map[string]int
	errs     []error
}

// wait returns, once every call the step started has ended, how many
// ended with each outcome (calls stopped by ctx count as none), and the
// errors of recording them.
func (p *outboxPass) wait() (map[string]int, error) {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.outcomes, errors.Join(p.errs...)
}

// newOutbox returns a dispatcher; its user fills in the functions.
func newOutbox[R outboxRow, A outboxAttempt](name string, limits outboxLimits, now func() time.Time, log *slog.Logger) *outbox[R, A] {
	return &outbox[R, A]{name: name, limits: limits, now: now, log: log, kick: make(chan struct{}, 1), targets: map[string]*outboxTarget{}}
}

// wake asks for a step now rather than at the next tick.
func (o *outbox[R, A]) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// dispatch is one scheduler step: it claims, for each target with calls
// due, as many as the target has room and rate for now, starts each, and
// returns without waiting for them; told, when not nil, hears each
// outcome as it comes. The calls run until they end or ctx does.
func (o *outbox[R, A]) dispatch(ctx context.Context, told func(outcome string)) (*outboxPass, error) {
	o.step.Lock()
	defer o.step.Unlock()
	pass := &outboxPass{outcomes: map[string]int{}}
	now := o.now()
	due, err := o.due(ctx, now)
	if err != nil || len(due) == 0 {
		return pass, err
	}
	want := map[string]int{}
	left := o.limits.Batch
	o.mu.Lock()
	o.sweep(now)
	for _, id := range due {
		t := o.targets[id]
		if t == nil {
			t = &outboxTarget{rate: rate.NewLimiter(rate.Limit(o.limits.Rate), o.limits.Burst)}
			o.targets[id] = t
		}
		if n := min(o.limits.Concurrency-t.busy, int(t.rate.TokensAt(now)), left); n > 0 {
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
	rows, err := o.claim(ctx, now, now.Add(o.limits.Lease), want)
	if err != nil {
		return pass, err
	}
	got := map[string]int{}
	o.mu.Lock()
	for _, r := range rows {
		t := o.targets[r.outboxTarget()]
		t.rate.AllowN(now, 1)
		t.busy++
		got[r.outboxTarget()]++
	}
	for id, n := range want {
		o.targets[id].more = got[id] == n
	}
	o.mu.Unlock()
	pass.Claimed = len(rows)
	for _, r := range rows {
		pass.wg.Add(1)
		o.running.Add(1)
		go o.call(ctx, o.targets[r.outboxTarget()], r, pass, told)
	}
	return pass, nil
}

// call makes one claimed call and records what became of it.
func (o *outbox[R, A]) call(ctx context.Context, t *outboxTarget, r R, pass *outboxPass, told func(string)) {
	defer func() {
		o.mu.Lock()
		t.busy--
		more := t.more
		o.mu.Unlock()
		pass.wg.Done()
		o.running.Done()
		if more {
			o.wake()
		}
	}()
	a := o.send(ctx, r, o.now())
	if ctx.Err() != nil {
		return // stopping: its claim lapses and it is made again (at least once)
	}
	outcome, retry := outcomeDelivered, time.Time{}
	if !a.OK() {
		var again bool
		outcome = outcomeGaveUp
		if retry, again = o.limits.Retry.next(r.outboxQueued(), o.now(), r.outboxFailed()+1, mrand.Float64()); again {
			outcome = outcomeFailed
		}
	}
	err := o.record(ctx, r, a, outcome, retry)
	pass.mu.Lock()
	defer pass.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			o.log.Warn("recording a call", "outbox", o.name, "err", err)
		}
		pass.errs = append(pass.errs, err)
		return
	}
	pass.outcomes[outcome]++
	if told != nil {
		told(outcome)
	}
}

// sweep forgets targets with nothing in flight whose rate is full again:
// such a target is the same as a new one. Called with mu held.
func (o *outbox[R, A]) sweep(now time.Time) {
	if now.Sub(o.swept) < sweepEvery {
		return
	}
	for id, t := range o.targets {
		if t.busy == 0 && t.rate.TokensAt(now) >= float64(o.limits.Burst) {
			delete(o.targets, id)
		}
	}
	o.swept = now
}

// run steps until ctx ends, then waits for the calls in flight (which ctx
// stops): a step at once when asked (wake), again at once after a step
// that claimed a full batch, and every period otherwise — for calls
// queued elsewhere (other replicas, admin commands) and retries falling
// due. told hears each outcome, from the calls' goroutines.
func (o *outbox[R, A]) run(ctx context.Context, period time.Duration, told func(outcome string)) {
	defer o.running.Wait()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		pass, err := o.dispatch(ctx, told)
		if err != nil && ctx.Err() == nil {
			o.log.Warn("claiming calls", "outbox", o.name, "err", err)
		}
		if err == nil && pass.Claimed == o.limits.Batch {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-o.kick:
		}
	}
}
