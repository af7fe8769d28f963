package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
)

// Options configure a run.
type Options struct {
	// Binary is the palaver executable to spawn a server with.
	Binary string
	// Dir holds the spawned server's database and the reports.
	Dir string
	// Quick shortens every workload so the whole run takes about a minute.
	Quick bool
	// Workloads names the workloads to run (W1 … W5); empty: all.
	Workloads []string
	// Progress receives a line a second while a workload runs.
	Progress io.Writer
}

// Report is everything a run measured.
type Report struct {
	When      time.Time       `json:"when"`
	Quick     bool            `json:"quick"`
	Settings  string          `json:"settings"`
	Floors    Floors          `json:"floors"`
	Workloads []WorkloadStats `json:"workloads"`
}

// WorkloadStats is one workload's numbers.
type WorkloadStats struct {
	Name      string  `json:"name"`
	Detail    string  `json:"detail"`
	PerSec    float64 `json:"per_s,omitempty"`
	Latency   Summary `json:"latency"`
	Errors    int64   `json:"errors"`
	CPU       float64 `json:"server_cpu_cores"` // server CPU in cores over the workload
	RSSBytes  int64   `json:"server_rss_bytes"`
	PerWaiter int64   `json:"rss_per_waiter_bytes,omitempty"`
	ParkTime  float64 `json:"time_to_park_s,omitempty"`
	IdleCPU   float64 `json:"idle_cpu_cores,omitempty"`
}

// perConversation is how many messages a sender sends into one
// conversation before it starts another: within the budget brake (60 per
// agent per conversation per hour), so the brakes stay on at their defaults
// as in real use.
const perConversation = 50

// server is a spawned `palaver serve`.
type server struct {
	url  string
	proc proc
	cmd  *exec.Cmd
	hub  *hub.Hub
	db   *store.DB
}

// spawn starts `palaver serve` on a fresh database in dir and opens the
// database beside it, as the admin commands do, to make agents and tokens.
func spawn(ctx context.Context, o Options) (*server, error) {
	database := filepath.Join(o.Dir, "palaver.db")
	args := []string{"serve", "--addr", "127.0.0.1:0", "--database", database}
	cmd := exec.CommandContext(ctx, o.Binary, args...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, proc: proc{pid: cmd.Process.Pid}}
	lines := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`mcp=(http://\S+/mcp/)`)
	for lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
			break
		}
	}
	if s.url == "" {
		cmd.Process.Kill()
		return nil, fmt.Errorf("the spawned server did not start")
	}
	go io.Copy(io.Discard, stderr)
	if s.db, err = store.Open(ctx, store.Options{Database: database, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		s.stop()
		return nil, err
	}
	if s.hub, err = hub.New(ctx, hub.Options{Store: s.db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)}); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *server) stop() {
	if s.db != nil {
		s.db.Close()
	}
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

// agents makes n agents of one owner and a client for each.
func (s *server) agents(ctx context.Context, owner, prefix string, n int) ([]*client, error) {
	if _, err := s.hub.User(ctx, owner); err != nil {
		if _, err := s.hub.CreateUser(ctx, owner, ""); err != nil {
			return nil, err
		}
	}
	hc := newHTTPClient()
	var out []*client
	for i := range n {
		slug := fmt.Sprintf("%s%d", prefix, i)
		if _, err := s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: owner + "/" + slug}); err != nil {
			return nil, err
		}
		_, secret, err := s.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug})
		if err != nil {
			return nil, err
		}
		out = append(out, &client{url: s.url, token: secret, http: hc})
	}
	return out, nil
}

// Run measures the floors, spawns a server and runs the workloads, writing
// report.md and report.json into o.Dir.
func Run(ctx context.Context, o Options) (*Report, error) {
	r := &Report{When: time.Now().UTC(), Quick: o.Quick,
		Settings: fmt.Sprintf("default brakes; each sender moves to a new conversation every %d messages to stay within its budget", perConversation)}
	d := 5 * time.Second
	if o.Quick {
		d = 2 * time.Second
	}
	var err error
	fmt.Fprintln(o.Progress, "measuring floors: fsync, raw HTTP round trips")
	if r.Floors.FsyncPerSec, err = measureFsync(o.Dir, d); err != nil {
		return nil, err
	}
	if r.Floors.HTTPPerSec, r.Floors.HTTPSequential, err = measureHTTP(ctx, d); err != nil {
		return nil, err
	}
	s, err := spawn(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	want := func(name string) bool { return len(o.Workloads) == 0 || slices.Contains(o.Workloads, name) }
	if want("W1") {
		senders := []int{1, 8, 32}
		if o.Quick {
			senders = []int{1, 32}
		}
		for _, n := range senders {
			st, err := sendThroughput(ctx, s, o, n, d)
			if err != nil {
				return nil, err
			}
			r.Workloads = append(r.Workloads, st)
		}
	}
	if want("W2") {
		st, err := sendToWake(ctx, s, o, 16, d)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	if want("W4") {
		n := 500
		if o.Quick {
			n = 100
		}
		st, err := fanOut(ctx, s, o, n)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	if want("W5") {
		sizes := []int{10000, 100000}
		if o.Quick {
			sizes = []int{10000}
		}
		for _, n := range sizes {
			st, err := historyGrowth(ctx, s, o, n, d)
			if err != nil {
				return nil, err
			}
			r.Workloads = append(r.Workloads, st...)
		}
	}
	if want("W3") {
		n := 2000
		if o.Quick {
			n = 500
		}
		st, err := parkedWaiters(ctx, s, o, n, d)
		if err != nil {
			return nil, err
		}
		r.Workloads = append(r.Workloads, st)
	}
	return r, r.write(o.Dir)
}

// progress prints a line a second with the count so far until stop.
func progress(w io.Writer, name string, count *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				n := count.Load()
				fmt.Fprintf(w, "%s: %d done, %.0f/s\n", name, n, float64(n)/time.Since(start).Seconds())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// sendThroughput is W1: n senders, closed loop, each into its own
// conversation, for d.
func sendThroughput(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W1 send, %d senders", n)
	senders, err := s.agents(ctx, "w1", fmt.Sprintf("s%d-", n), n)
	if err != nil {
		return WorkloadStats{}, err
	}
	if _, err := s.agents(ctx, "w1", fmt.Sprintf("sink%d-", n), 1); err != nil {
		return WorkloadStats{}, err
	}
	// newConv starts a group conversation of a sender with the sink.
	newConv := func(c *client) (string, error) {
		var out struct {
			ConversationID string `json:"conversation_id"`
		}
		err := c.call(ctx, "create_thread", map[string]any{"title": "load", "participants": []string{fmt.Sprintf("w1/sink%d-0", n)}}, &out)
		return out.ConversationID, err
	}
	var count, errs atomic.Int64
	lats := make([]latencies, n)
	cpu0 := s.proc.cpu()
	stop := progress(o.Progress, name, &count)
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range senders {
		wg.Go(func() {
			var conv string
			for k := 0; time.Since(start) < d; k++ {
				if k%perConversation == 0 {
					var err error
					if conv, err = newConv(c); err != nil {
						errs.Add(1)
						return
					}
				}
				t := time.Now()
				err := c.call(ctx, "send_message", map[string]any{"conversation_id": conv, "body": fmt.Sprintf("load %d/%d: a short ask of a typical length", i, k)}, nil)
				if err != nil {
					errs.Add(1)
					continue
				}
				lats[i] = append(lats[i], time.Since(t))
				count.Add(1)
			}
		})
	}
	wg.Wait()
	stop()
	elapsed := time.Since(start)
	var all latencies
	for _, l := range lats {
		all = append(all, l...)
	}
	return WorkloadStats{Name: name, Detail: "closed loop, 200-byte bodies, durable (synchronous=FULL)",
		PerSec: float64(count.Load()) / elapsed.Seconds(), Latency: all.summary(), Errors: errs.Load(),
		CPU: (s.proc.cpu() - cpu0).Seconds() / elapsed.Seconds(), RSSBytes: s.proc.rss()}, nil
}

// sendToWake is W2: pairs of a parked waiter and a sender; each send
// carries its send time, and the waiter's wake-up is timed against it.
func sendToWake(ctx context.Context, s *server, o Options, pairs int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W2 send→wake, %d pairs", pairs)
	waiters, err := s.agents(ctx, "w2", "waiter", pairs)
	if err != nil {
		return WorkloadStats{}, err
	}
	senders, err := s.agents(ctx, "w2", "sender", pairs)
	if err != nil {
		return WorkloadStats{}, err
	}
	var count, errs atomic.Int64
	var mu sync.Mutex
	var lat latencies
	stop := progress(o.Progress, name, &count)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range pairs {
		var opened struct {
			ConversationID string `json:"conversation_id"`
		}
		if err := senders[i].call(ctx, "open_conversation", map[string]any{"handles": []string{fmt.Sprintf("w2/waiter%d", i)}}, &opened); err != nil {
			return WorkloadStats{}, err
		}
		var me struct {
			LatestCursor string `json:"latest_cursor"`
		}
		if err := waiters[i].call(ctx, "whoami", map[string]any{}, &me); err != nil {
			return WorkloadStats{}, err
		}
		received := make(chan struct{}, 1)
		wg.Go(func() { // the waiter
			cursor := me.LatestCursor
			for time.Since(start) < d+2*time.Second {
				var got struct {
					Cursor string `json:"cursor"`
					Events []struct {
						Message struct {
							Body string `json:"body"`
						} `json:"message"`
					} `json:"events"`
				}
				if err := waiters[i].call(ctx, "wait_for_messages", map[string]any{"cursor": cursor, "timeout_s": 5}, &got); err != nil {
					errs.Add(1)
					return
				}
				now := time.Now()
				for _, e := range got.Events {
					stamp, _, _ := strings.Cut(e.Message.Body, " ") // "" for events without a message
					if ns, err := strconv.ParseInt(stamp, 10, 64); err == nil {
						mu.Lock()
						lat = append(lat, now.Sub(time.Unix(0, ns)))
						mu.Unlock()
						count.Add(1)
						select {
						case received <- struct{}{}:
						default:
						}
					}
				}
				cursor = got.Cursor
			}
		})
		wg.Go(func() { // the sender: one message at a time, after the last was heard
			conv := opened.ConversationID
			for k := 0; time.Since(start) < d; k++ {
				if k > 0 && k%perConversation == 0 {
					var out struct {
						ConversationID string `json:"conversation_id"`
					}
					if err := senders[i].call(ctx, "create_thread", map[string]any{"title": "wake", "participants": []string{fmt.Sprintf("w2/waiter%d", i)}}, &out); err != nil {
						errs.Add(1)
						return
					}
					conv = out.ConversationID
				}
				body := fmt.Sprintf("%d wake %d", time.Now().UnixNano(), k)
				if err := senders[i].call(ctx, "send_message", map[string]any{"conversation_id": conv, "body": body}, nil); err != nil {
					errs.Add(1)
					return
				}
				select {
				case <-received:
				case <-time.After(5 * time.Second):
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	stop()
	return WorkloadStats{Name: name, Detail: "send start → waiter response", Latency: lat.summary(), Errors: errs.Load(), RSSBytes: s.proc.rss()}, nil
}

// parkedWaiters is W3: n waits parked at once (5 per agent), one TCP
// connection each; it reports memory per waiter, time to park and idle CPU.
func parkedWaiters(ctx context.Context, s *server, o Options, n int, d time.Duration) (WorkloadStats, error) {
	name := fmt.Sprintf("W3 %d parked waiters", n)
	agents, err := s.agents(ctx, "w3", "idle", (n+4)/5)
	if err != nil {
		return WorkloadStats{}, err
	}
	before := s.proc.rss()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var parked atomic.Int64
	stop := progress(o.Progress, name, &parked)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			parked.Add(1)
			agents[i/5].call(ctx, "wait_for_messages", map[string]any{"timeout_s": 55}, nil)
		})
	}
	// Parked means the server holds them: wait until its memory settles
	// for a moment after the last request left.
	for parked.Load() < int64(n) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	parkTime := time.Since(start)
	stop()
	after := s.proc.rss()
	cpu0 := s.proc.cpu()
	time.Sleep(d)
	idle := (s.proc.cpu() - cpu0).Seconds() / d.Seconds()
	cancel()
	wg.Wait()
	return WorkloadStats{Name: name, Detail: "wait_for_messages timeout 55 s, one connection each", RSSBytes: after,
		PerWaiter: (after - before) / int64(n), ParkTime: parkTime.Seconds(), IdleCPU: idle}, nil
}

// fanOut is W4: one message into a group of n agents, each parked in a
// wait; the time until the last of them has it.
func fanOut(ctx context.Context, s *server, o Options, n int) (WorkloadStats, error) {
	name := fmt.Sprintf("W4 fan-out to %d waiters", n)
	members, err := s.agents(ctx, "w4", "member", n)
	if err != nil {
		return WorkloadStats{}, err
	}
	sender, err := s.agents(ctx, "w4", "speaker", 1)
	if err != nil {
		return WorkloadStats{}, err
	}
	handles := make([]string, n)
	for i := range handles {
		handles[i] = fmt.Sprintf("w4/member%d", i)
	}
	var conv struct {
		ConversationID string `json:"conversation_id"`
	}
	first := min(n, hub.MaxMembers)
	if err := sender[0].call(ctx, "create_thread", map[string]any{"title": "fan-out", "participants": handles[:first]}, &conv); err != nil {
		return WorkloadStats{}, err
	}
	for _, hd := range handles[first:] {
		if err := sender[0].call(ctx, "add_participant", map[string]any{"conversation_id": conv.ConversationID, "handle": hd}, nil); err != nil {
			return WorkloadStats{}, err
		}
	}
	var cursor struct {
		LatestCursor string `json:"latest_cursor"`
	}
	if err := members[0].call(ctx, "whoami", map[string]any{}, &cursor); err != nil {
		return WorkloadStats{}, err
	}
	var parked, errs atomic.Int64
	done := make(chan time.Time, n)
	for _, m := range members {
		go func() {
			parked.Add(1)
			if err := m.call(ctx, "wait_for_messages", map[string]any{"cursor": cursor.LatestCursor, "timeout_s": 30}, nil); err != nil {
				errs.Add(1)
			}
			done <- time.Now()
		}()
	}
	for parked.Load() < int64(n) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let the last requests reach the server
	start := time.Now()
	if err := sender[0].call(ctx, "send_message", map[string]any{"conversation_id": conv.ConversationID, "body": "everyone: one message for all"}, nil); err != nil {
		return WorkloadStats{}, err
	}
	var lat latencies
	for range n {
		lat = append(lat, (<-done).Sub(start))
	}
	return WorkloadStats{Name: name, Detail: "one send; time until each parked waiter had it (max = the last)", Latency: lat.summary(),
		Errors: errs.Load(), RSSBytes: s.proc.rss()}, nil
}

// historyGrowth is W5: n messages of history (written straight into the
// database, as the admin commands do), then check_inbox and read_messages
// timed one at a time.
func historyGrowth(ctx context.Context, s *server, o Options, n int, d time.Duration) ([]WorkloadStats, error) {
	owner := fmt.Sprintf("w5-%d", n)
	pair, err := s.agents(ctx, owner, "a", 2)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "W5: writing %d messages of history\n", n)
	writer, err := s.hub.Authenticate(ctx, pair[0].token)
	if err != nil {
		return nil, err
	}
	reader, err := s.hub.Authenticate(ctx, pair[1].token)
	if err != nil {
		return nil, err
	}
	// Spread over conversations of 50 to stay within the budget brake; the
	// reader acknowledges all but the last 20, as a working agent would.
	var convs []string
	var wg sync.WaitGroup
	var written atomic.Int64
	stop := progress(o.Progress, "W5 history", &written)
	for start := 0; start < n; start += perConversation * 32 {
		for w := 0; w < 32 && start+w*perConversation < n; w++ {
			v, err := s.hub.CreateThread(ctx, writer, hub.ThreadSpec{Title: "history", Participants: []string{fmt.Sprintf("%s/a1", owner)}})
			if err != nil {
				stop()
				return nil, err
			}
			convs = append(convs, v.Conversation.ID)
			first := start + w*perConversation
			wg.Go(func() {
				for k := first; k < min(first+perConversation, n); k++ {
					r, err := s.hub.SendMessage(ctx, writer, hub.SendInput{ConversationID: v.Conversation.ID, Body: fmt.Sprintf("history %d", k)})
					if err == nil && k < n-20 {
						s.hub.Acknowledge(ctx, reader, r.Message.ID, "", "")
					}
					written.Add(1)
				}
			})
		}
		wg.Wait()
	}
	stop()
	time.Sleep(1500 * time.Millisecond) // the server's recheck sees the new events
	var out []WorkloadStats
	for _, tool := range []string{"check_inbox", "read_messages"} {
		var lat latencies
		var errs int64
		start := time.Now()
		for i := 0; time.Since(start) < d; i++ {
			args := map[string]any{}
			if tool == "read_messages" {
				args = map[string]any{"conversation_id": convs[i%len(convs)], "mark_read": false, "limit": 20}
			}
			t := time.Now()
			if err := pair[1].call(ctx, tool, args, nil); err != nil {
				errs++
				continue
			}
			lat = append(lat, time.Since(t))
		}
		out = append(out, WorkloadStats{Name: fmt.Sprintf("W5 %s at %d messages", tool, n),
			Detail: "one at a time, client-side time", Latency: lat.summary(), Errors: errs, RSSBytes: s.proc.rss()})
	}
	return out, nil
}

// write saves report.md and report.json in dir.
func (r *Report) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644)
}

// Markdown is the report as a table, each speed also as a ratio to its
// floor.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# palaver bench, %s%s\n\n", r.When.Format(time.RFC3339), map[bool]string{true: " (quick)"}[r.Quick])
	fmt.Fprintf(&b, "Floors of this machine, measured in this run: fsync %.0f/s; raw HTTP JSON round trips %.0f/s (32 clients), p50 %.3f ms one at a time.\n\n", r.Floors.FsyncPerSec, r.Floors.HTTPPerSec, r.Floors.HTTPSequential.P50)
	fmt.Fprintf(&b, "Settings: %s.\n\n", r.Settings)
	fmt.Fprintln(&b, "| workload | rate/s | ratio to floor | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | server CPU (cores) | server RSS MiB | per waiter KiB | park s | idle CPU |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, w := range r.Workloads {
		ratio := ""
		if w.PerSec > 0 && r.Floors.HTTPPerSec > 0 {
			ratio = fmt.Sprintf("%.1f %% of HTTP, %.1f× fsync", 100*w.PerSec/r.Floors.HTTPPerSec, w.PerSec/r.Floors.FsyncPerSec)
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %.2f | %.0f | %.1f | %.2f | %.3f |\n",
			w.Name, w.PerSec, ratio, w.Latency.P50, w.Latency.P90, w.Latency.P99, w.Latency.P999, w.Latency.Max, w.Errors,
			w.CPU, float64(w.RSSBytes)/(1<<20), float64(w.PerWaiter)/1024, w.ParkTime, w.IdleCPU)
	}
	return b.String()
}
