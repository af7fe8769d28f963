package hub_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
)

// waitResult runs a Wait in the background.
type waitResult struct {
	r   *hub.WaitResult
	err error
}

func startWait(ctx context.Context, w *world, c *hub.Caller, in hub.WaitInput) <-chan waitResult {
	ch := make(chan waitResult, 1)
	go func() {
		r, err := w.Hub.Wait(ctx, c, in)
		ch <- waitResult{r, err}
	}()
	return ch
}

func within(t *testing.T, ch <-chan waitResult) waitResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not return within 10s")
		return waitResult{}
	}
}

func TestWaitReturnsPastEventsAtOnce(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	start, ownStart := w.Latest(t, w.Reviewer), w.Latest(t, w.Planner)
	sent := w.Send(t, w.Planner, conv, "hello")
	r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: start, Timeout: hub.MaxWait})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 1 || r.Events[0].Type != hub.EventMessageNew || r.Events[0].Message.ID != sent.Message.ID || r.TimedOut {
		t.Fatalf("wait from before the send: %+v", r)
	}
	// The sender's own stream carries its message too (sibling sessions).
	own, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: ownStart})
	if err != nil || len(own.Events) != 1 {
		t.Fatalf("sender's wait: %+v, %v", own, err)
	}
	// From the newest cursor nothing is waiting: a zero timeout times out.
	r, err = w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &r.Cursor})
	if err != nil || !r.TimedOut || len(r.Events) != 0 {
		t.Fatalf("wait from the newest cursor: %+v, %v", r, err)
	}
}

func TestParkedWaitWakesOnCommit(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	cursor := w.Latest(t, w.Reviewer)
	ch := startWait(ctx, w, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: hub.MaxWait})
	sent := w.Send(t, w.Planner, conv, "wake up")
	got := within(t, ch)
	if got.err != nil || len(got.r.Events) != 1 || got.r.Events[0].Message.ID != sent.Message.ID {
		t.Fatalf("parked wait: %+v, %v", got.r, got.err)
	}
}

func TestWaitSlots(t *testing.T) {
	w := newWorld(t)
	cursor := w.Latest(t, w.Reviewer)
	var cancels []context.CancelFunc
	var chans []<-chan waitResult
	for range 5 {
		c, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		chans = append(chans, startWait(c, w, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: hub.MaxWait}))
	}
	// The 6th is refused while 5 are live.
	w.Parked(t, 5)
	_, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: cursor})
	if e, ok := err.(*hub.Error); !ok || e.Code != "too_many_waits" || e.Kind != hub.KindRateLimited || e.Details["retry_after_s"] == nil {
		t.Fatalf("6th wait: %v, want rate_limited too_many_waits with retry_after_s", err)
	}
	// Another agent's waits are not counted.
	if r, err := w.Hub.Wait(ctx, w.Planner, hub.WaitInput{Cursor: w.Latest(t, w.Planner)}); err != nil || !r.TimedOut {
		t.Fatalf("another agent's wait: %v", err)
	}
	// A client hanging up frees its slot at once.
	cancels[0]()
	if r := within(t, chans[0]); r.err == nil {
		t.Fatalf("hung-up wait returned %+v, want its context error", r.r)
	}
	w.Parked(t, 4)
	if r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: cursor}); err != nil || !r.TimedOut {
		t.Fatalf("wait after one hung up: %+v, %v", r, err)
	}
	w.Hub.Shutdown()
	for _, ch := range chans[1:] {
		if r := within(t, ch); r.err != nil || !r.r.TimedOut {
			t.Fatalf("wait at shutdown: %+v, %v; want timed_out", r.r, r.err)
		}
	}
	for _, c := range cancels {
		c()
	}
}

// heldWaker is a Waker whose next subscription to end, once armed, holds
// its waiter at the end of its wait until let go: a wait whose client hung
// up but which has not returned yet.
type heldWaker struct {
	*notify.Local
	armed   atomic.Bool
	holding chan struct{} // receives when a waiter is held
	letGo   chan struct{}
}

func (k *heldWaker) Subscribe(id string) (<-chan struct{}, func()) {
	ch, cancel := k.Local.Subscribe(id)
	return ch, func() {
		if k.armed.CompareAndSwap(true, false) {
			k.holding <- struct{}{}
			<-k.letGo
		}
		cancel()
	}
}

// TestHungUpWaitFreesItsSlotAtOnce: the slot of a wait whose client hung up
// is free as soon as the hang-up is seen, before that wait has returned
// (§6): a client that hangs up and waits again is not told to retry.
func TestHungUpWaitFreesItsSlotAtOnce(t *testing.T) {
	w := newWorld(t)
	k := &heldWaker{Local: w.Waker, holding: make(chan struct{}), letGo: make(chan struct{})}
	h := w.HubOn(t, w.Store, k)
	cursor := w.Latest(t, w.Reviewer)
	var cancels []context.CancelFunc
	var chans []chan waitResult
	for i := range 5 {
		c, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		chans = append(chans, make(chan waitResult, 1))
		go func() {
			r, err := h.Wait(c, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: hub.MaxWait})
			chans[i] <- waitResult{r, err}
		}()
	}
	w.Parked(t, 5)
	k.armed.Store(true)
	cancels[0]()
	<-k.holding // the first wait saw its client hang up and has not returned
	r, err := h.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: cursor})
	if err != nil || !r.TimedOut {
		t.Errorf("a wait right after one hung up: %+v, %v; want timed_out, not too_many_waits", r, err)
	}
	close(k.letGo)
	h.Shutdown()
	for _, c := range cancels {
		c()
	}
	for _, ch := range chans {
		within(t, ch)
	}
}

func TestNewWaitOfSameSessionEndsTheOld(t *testing.T) {
	w := newWorld(t)
	cursor := w.Latest(t, w.Reviewer)
	first := startWait(ctx, w, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: hub.MaxWait, Instance: "desk"})
	w.Parked(t, 1)
	second := startWait(ctx, w, w.Reviewer, hub.WaitInput{Cursor: cursor, Timeout: time.Second, Instance: "desk"})
	got := within(t, first)
	if got.err != nil || !got.r.Superseded || len(got.r.Events) != 0 || got.r.Cursor != *cursor {
		t.Fatalf("first wait: %+v, %v; want superseded with nothing consumed", got.r, got.err)
	}
	if r := within(t, second); r.err != nil || !r.r.TimedOut {
		t.Fatalf("second wait: %+v, %v", r.r, r.err)
	}
}

func TestCursorErrors(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.Send(t, w.Planner, conv, "one")
	latest := *w.Latest(t, w.Reviewer)
	me := w.Reviewer.Agent.ID
	raw, _ := base64.RawURLEncoding.DecodeString(latest)
	tag := raw[len(raw)-6:]
	enc := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	tampered := slices.Clone(raw)
	tampered[len(raw)-1] ^= 1
	other := newWorld(t)
	// The last character of an unpadded cursor carries bits no byte uses
	// (raw is 7 bytes on SQLite); setting the lowest spells the same bytes.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, latest[len(latest)-1])
	padded := latest[:len(latest)-1] + string(alphabet[last|1])
	if len(raw)%3 == 0 {
		padded = latest + "A" // no unused bits: one character too many
	}
	pos := hub.PosOfCursorForTest(latest)

	cases := []struct{ name, cursor, want string }{
		{"unused bits set", padded, "cursor_invalid"},
		{"garbage", "not a cursor!", "cursor_invalid"},
		{"too short", enc(raw[:3]), "cursor_invalid"},
		{"tampered", enc(tampered), "cursor_invalid"},
		{"another reader's", *w.Latest(t, w.Planner), "cursor_invalid"},
		{"another database's", other.Hub.CursorForTest(me, "", hub.Pos{ID: 1}), "cursor_invalid"},
		{"a second spelling", enc(append(append([]byte{0x80 | raw[0], 0}, raw[1:len(raw)-6]...), tag...)), "cursor_invalid"},
		{"a transaction id of 0 spelled out", enc(append(append(binary.AppendUvarint(nil, uint64(pos.ID)), 0), tag...)), "cursor_invalid"},
	}
	// Where the log is in id order (SQLite), a cursor past its last event
	// is refused. On PostgreSQL a cursor of a transaction may stand past
	// the horizon (a webhook's, hub.Pos), and reading after it is safe.
	if pos.Tx == 0 {
		cases = append(cases, struct{ name, cursor, want string }{"ahead of the log", w.Hub.CursorForTest(me, "", hub.Pos{ID: 999}), "cursor_invalid"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &tc.cursor})
			e, ok := err.(*hub.Error)
			if code(err) != tc.want || !ok || e.Details["latest_cursor"] != latest {
				t.Fatalf("wait = %+v, %v; want %s carrying latest_cursor %s", r, err, tc.want, latest)
			}
		})
	}
	// No cursor at all starts at the latest, and so does an empty one.
	empty := ""
	for _, in := range []hub.WaitInput{{}, {Cursor: &empty}} {
		if r, err := w.Hub.Wait(ctx, w.Reviewer, in); err != nil || !r.TimedOut || r.Cursor != latest {
			t.Fatalf("a wait with cursor %v: %+v, %v; want timed_out at %s", in.Cursor, r, err, latest)
		}
	}

	// Events older than 30 days are pruned; a cursor before them expires.
	start := w.Hub.CursorForTest(me, "", hub.Pos{})
	w.Clock.Advance(31 * 24 * time.Hour)
	if err := w.Hub.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &start})
	if code(err) != "cursor_expired" {
		t.Fatalf("cursor older than the kept events: %v, want cursor_expired", err)
	}
	if r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &latest}); err != nil || !r.TimedOut {
		t.Fatalf("the latest cursor after pruning: %+v, %v", r, err)
	}
}

// TestCursorsAcrossARestore: a restore ends the generation its backup was
// taken in where the backup's log ended (§6). Cursors of that generation up
// to there keep working; one issued past it — on the database the backup
// was taken from — is cursor_invalid, also once the restored log has grown
// past it.
func TestCursorsAcrossARestore(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.Send(t, w.Planner, conv, "before the backup")
	before := *w.Latest(t, w.Reviewer)
	through := hub.PosOfCursorForTest(before)
	old := w.Hub.GenerationForTest()
	// The restored copy: a new generation begins at the backup's end.
	ended, err := hub.MarkRestored(ctx, w.Store)
	if err != nil || ended.ID != old || ended.End().Compare(through) < 0 {
		t.Fatalf("MarkRestored = %+v, %v; want generation %q through %v or later", ended, err, old, through)
	}
	w.reopen(t)
	if w.Hub.GenerationForTest() == old {
		t.Fatal("the restore kept the generation")
	}
	// The original database went on past the backup and issued this one.
	stale := w.Hub.CursorForTest(w.Reviewer.Agent.ID, old, hub.Pos{Tx: ended.ThroughTx, ID: ended.Through + 1})
	for i := range 3 {
		w.Send(t, w.Planner, conv, fmt.Sprintf("after the restore, %d", i+1))
	}
	_, err = w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &stale})
	if code(err) != "cursor_invalid" {
		t.Fatalf("a cursor issued after the backup, once the log regrew past it: %v; want cursor_invalid", err)
	}
	r, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &before})
	if err != nil || len(r.Events) != 3 {
		t.Fatalf("a cursor from before the backup: %+v, %v; want the 3 messages after it", r, err)
	}
	// Cursors the restored database issues work, and a second restore
	// keeps the first's limit.
	if _, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &r.Cursor}); err != nil {
		t.Fatalf("a cursor of the new generation: %v", err)
	}
	if _, err := hub.MarkRestored(ctx, w.Store); err != nil {
		t.Fatal(err)
	}
	w.reopen(t)
	if _, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &before}); err != nil {
		t.Fatalf("a cursor from before the first backup, after a second restore: %v", err)
	}
	if _, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &stale}); code(err) != "cursor_invalid" {
		t.Fatalf("the stale cursor after a second restore: %v; want cursor_invalid", err)
	}
}

func TestClosedConversationEventsAreNotHandedOver(t *testing.T) {
	w := newWorld(t)
	cursor := w.Latest(t, w.Helper)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.Send(t, w.Planner, conv, "hello")
	// Archiving the recipient's peer does not hide past events; leaving
	// does. Simulate the recipient losing access: bob's helper never had it.
	r, err := w.Hub.Wait(ctx, w.Helper, hub.WaitInput{Cursor: cursor})
	if err != nil || len(r.Events) != 0 {
		t.Fatalf("stranger's wait: %+v, %v", r, err)
	}
}

// TestRecheckWakesForAnotherProcess: a commit by another process on the same
// database (an admin command) wakes nobody here until Recheck, which wakes
// the waiters to re-query.
func TestRecheckWakesForAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palaver.db")
	open := func() (*hub.Hub, *notify.Local) {
		db, err := store.Open(ctx, store.Options{Database: path, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		waker := notify.NewLocal()
		h, err := hub.New(ctx, hub.Options{Store: db, Waker: waker, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return h, waker
	}
	server, waker := open()
	admin, _ := open()
	if _, err := admin.CreateUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	var callers []*hub.Caller
	for _, slug := range []string{"planner", "reviewer"} {
		if _, err := admin.CreateAgent(ctx, hub.AgentSpec{Handle: "alice/" + slug}); err != nil {
			t.Fatal(err)
		}
		_, secret, err := admin.MintToken(ctx, hub.TokenSpec{Owner: "alice", Agent: slug})
		if err != nil {
			t.Fatal(err)
		}
		c, err := server.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		callers = append(callers, c)
	}
	cursor, _ := server.LatestCursor(ctx, callers[1].Agent.ID)
	ch := make(chan waitResult, 1)
	go func() {
		r, err := server.Wait(ctx, callers[1], hub.WaitInput{Cursor: &cursor, Timeout: hub.MaxWait})
		ch <- waitResult{r, err}
	}()
	for waker.Waiters() != 1 {
		runtime.Gosched()
	}
	// The other process opens a conversation: its event is committed, but
	// this process was not told.
	if _, err := admin.OpenConversation(ctx, callers[0], []string{"alice/reviewer"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		t.Fatalf("the wait returned before the recheck: %+v", r)
	default:
	}
	if err := server.Recheck(ctx); err != nil {
		t.Fatal(err)
	}
	if got := within(t, ch); got.err != nil || len(got.r.Events) != 1 || got.r.Events[0].Type != hub.EventConversationOpened {
		t.Fatalf("after the recheck: %+v, %v", got.r, got.err)
	}
}

// TestWaitTimeoutIsCheckedBeforeConverting: timeout_s defaults to 25 s and
// is refused outside 0–55 before it becomes a duration, so a count of
// seconds that would wrap around as nanoseconds is refused, not waited.
func TestWaitTimeoutIsCheckedBeforeConverting(t *testing.T) {
	for _, tc := range []struct {
		seconds *int64
		want    time.Duration
		err     string
	}{
		{nil, 25 * time.Second, ""},
		{new(int64(0)), 0, ""},
		{new(int64(55)), 55 * time.Second, ""},
		{new(int64(56)), 0, "invalid_argument"},
		{new(int64(-1)), 0, "invalid_argument"},
		{new(int64(18446744080)), 0, "invalid_argument"}, // 6 s once multiplied by 10⁹ and wrapped
	} {
		got, err := hub.WaitTimeout(tc.seconds)
		if got != tc.want || code(err) != tc.err {
			t.Errorf("WaitTimeout(%v) = %v, %v; want %v, %q", tc.seconds, got, err, tc.want, tc.err)
		}
	}
}

// TestGenerationsEndingBeforeTheKeptEventsAreForgotten: a generation (a
// SQLite server starts one each time) whose end is older than the kept
// events is dropped at the next one, and its cursors are cursor_expired,
// as every cursor that old is.
func TestGenerationsEndingBeforeTheKeptEventsAreForgotten(t *testing.T) {
	w := newWorld(t)
	conv := w.Direct(t, w.Planner, "alice/reviewer")
	w.Send(t, w.Planner, conv, "long ago")
	old := *w.Latest(t, w.Reviewer)
	first := w.Hub.GenerationForTest()
	if _, err := hub.MarkRestored(ctx, w.Store); err != nil {
		t.Fatal(err)
	}
	w.reopen(t)
	if gs := w.Hub.GenerationsForTest(); len(gs) != 1 || gs[0].ID != first {
		t.Fatalf("generations after one restart: %+v; want %q", gs, first)
	}
	w.Send(t, w.Planner, conv, "also long ago")
	w.Clock.Advance(31 * 24 * time.Hour)
	w.Send(t, w.Planner, conv, "now")
	if err := w.Hub.PruneEvents(ctx); err != nil {
		t.Fatal(err)
	}
	second := w.Hub.GenerationForTest()
	if _, err := hub.MarkRestored(ctx, w.Store); err != nil {
		t.Fatal(err)
	}
	w.reopen(t)
	if gs := w.Hub.GenerationsForTest(); len(gs) != 1 || gs[0].ID != second {
		t.Fatalf("generations once the first ended before the kept events: %+v; want only %q", gs, second)
	}
	if _, err := w.Hub.Wait(ctx, w.Reviewer, hub.WaitInput{Cursor: &old}); code(err) != "cursor_expired" {
		t.Fatalf("a cursor of a forgotten generation: %v; want cursor_expired", err)
	}
}
