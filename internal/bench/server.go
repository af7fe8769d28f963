package bench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
)

// server is the `palaver serve` under load: one process, or several
// replicas sharing a PostgreSQL database.
type server struct {
	urls     []string // each replica's MCP endpoint, http://host:port/mcp/
	procs    []proc   // the replicas' processes
	children []*child // the ones spawned, stopped at the end
	hub      *hub.Hub // on the server's database, to make agents and tokens
	db       *store.DB
	// prefix starts the names of the people the bench makes, so that runs
	// against one long-lived database do not collide.
	prefix string
	// progress receives a line when making many agents takes a while.
	progress io.Writer
}

// spawn starts replicas `palaver serve` processes on database and opens the
// database beside them, as the admin commands do, to make agents and tokens.
func spawn(ctx context.Context, o Options, database string, replicas int) (*server, error) {
	s := &server{progress: o.Progress}
	for range replicas {
		if err := s.start(ctx, o.Binary, database); err != nil {
			s.stop()
			return nil, err
		}
	}
	if err := s.open(ctx, database); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// attach is a server already running at o.URL on o.Database, whose
// database the bench opens as the admin commands do. Its CPU and memory are
// known only when o.PID gives its process.
func attach(ctx context.Context, o Options) (*server, error) {
	base := strings.TrimSuffix(strings.TrimSuffix(o.URL, "/"), "/mcp")
	s := &server{urls: []string{base + "/mcp/"}, progress: o.Progress,
		prefix: "b" + strconv.FormatInt(time.Now().Unix(), 36) + "-"}
	if o.PID > 0 {
		s.procs = []proc{{pid: o.PID}}
	}
	if err := s.open(ctx, o.Database); err != nil {
		return nil, err
	}
	return s, nil
}

// start starts one `palaver serve` on database and waits until it listens.
func (s *server) start(ctx context.Context, binary, database string) error {
	c, err := startServe(ctx, binary, "127.0.0.1:0", database, io.Discard, nil, nil)
	if err != nil {
		return err
	}
	s.urls = append(s.urls, "http://"+c.addr+"/mcp/")
	s.procs = append(s.procs, proc{pid: c.cmd.Process.Pid})
	s.children = append(s.children, c)
	return nil
}

// child is one spawned `palaver serve`.
type child struct {
	cmd  *exec.Cmd
	addr string // where it listens, host:port
	// logged is closed when the process's stderr has been copied to its
	// end, which comes when the process exits.
	logged chan struct{}
}

// startServe starts `palaver serve` listening on addr (port 0: any free
// one) on database, with any more arguments and environment variables
// (NAME=value), and returns once it logs that it is serving. Its stderr,
// that line included, is copied to log.
func startServe(ctx context.Context, binary, addr, database string, log io.Writer, args, env []string) (*child, error) {
	cmd := exec.CommandContext(ctx, binary, append([]string{"serve", "--addr", addr, "--database", database}, args...)...)
	cmd.Env = append(append(os.Environ(), "GOMAXPROCS=2"), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, logged: make(chan struct{})}
	// A server that says nothing for a minute is stopped, which ends the
	// reading below.
	silent := time.AfterFunc(startTimeout, func() { cmd.Process.Kill() })
	defer silent.Stop()
	lines := bufio.NewScanner(stderr)
	// The listen address, not the logged public URL: a PALAVER_BASE_URL in
	// the environment names the public one.
	re := regexp.MustCompile(`palaver is serving.*? addr=(\S+)`)
	for lines.Scan() {
		fmt.Fprintln(log, lines.Text())
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			c.addr = m[1]
			go func() {
				defer close(c.logged)
				for lines.Scan() {
					fmt.Fprintln(log, lines.Text())
				}
				io.Copy(log, stderr) // what a line too long for the scanner left
			}()
			return c, nil
		}
		err = errors.New(lines.Text())
	}
	close(c.logged)
	cmd.Process.Kill()
	cmd.Wait()
	if !silent.Stop() {
		return nil, fmt.Errorf("the spawned server did not say it was serving within %v", startTimeout)
	}
	return nil, fmt.Errorf("the spawned server did not start: %v", err)
}

// startTimeout is how long a spawned server may take to start serving.
const startTimeout = time.Minute

// wait waits for the process to exit, its stderr copied first.
func (c *child) wait() error {
	<-c.logged
	return c.cmd.Wait()
}

// open opens the server's database and a hub on it.
func (s *server) open(ctx context.Context, database string) error {
	var err error
	if s.db, err = store.Open(ctx, store.Options{Database: database, Logger: slog.New(slog.DiscardHandler)}); err != nil {
		return err
	}
	s.hub, err = hub.New(ctx, hub.Options{Store: s.db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)})
	return err
}

// describe says which server this is, for the report.
func (s *server) describe() string {
	switch {
	case len(s.children) > 0:
		return fmt.Sprintf("spawned by the bench on a fresh database, %s", strings.TrimSuffix(s.urls[0], "/mcp/"))
	case len(s.procs) > 0:
		return fmt.Sprintf("already running at %s, process %d", strings.TrimSuffix(s.urls[0], "/mcp/"), s.procs[0].pid)
	}
	return fmt.Sprintf("already running at %s, process not given (--pid): its CPU and memory are n/a", strings.TrimSuffix(s.urls[0], "/mcp/"))
}

// cpu is the server's CPU time so far, all replicas together.
func (s *server) cpu() time.Duration {
	var sum time.Duration
	for _, p := range s.procs {
		sum += p.cpu()
	}
	return sum
}

// rss is the server's resident memory in bytes, all replicas together.
func (s *server) rss() int64 {
	var sum int64
	for _, p := range s.procs {
		sum += p.rss()
	}
	return sum
}

// runtime reads the server's /metrics: the replicas' goroutines, heaps,
// collections and tool calls added up, and of each pause quantile the
// largest.
func (s *server) runtime(ctx context.Context) (serverRuntime, error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	sum := serverRuntime{gcPause: map[string]float64{}, tools: map[string]bucketCounts{}}
	for _, u := range s.urls {
		rt, err := readRuntime(ctx, hc, metricsURL(u))
		if err != nil {
			return serverRuntime{}, err
		}
		sum.goroutines += rt.goroutines
		sum.heapInuse += rt.heapInuse
		sum.gcs += rt.gcs
		sum.gcSeconds += rt.gcSeconds
		sum.commits += rt.commits
		sum.pages += rt.pages
		for q, v := range rt.gcPause {
			sum.gcPause[q] = max(sum.gcPause[q], v)
		}
		for tool, h := range rt.tools {
			sum.tools[tool] = sum.tools[tool].add(h)
		}
	}
	return sum, nil
}

// settle waits until the server's goroutine count holds still for 300 ms
// (10 s at most): the requests it was just sent have reached their
// handlers. Without /metrics it waits half a second.
func (s *server) settle(ctx context.Context) {
	prev, err := s.runtime(ctx)
	if err != nil {
		time.Sleep(500 * time.Millisecond)
		return
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		time.Sleep(300 * time.Millisecond)
		cur, err := s.runtime(ctx)
		if err != nil || math.Abs(cur.goroutines-prev.goroutines) <= max(2, prev.goroutines/500) {
			return
		}
		prev = cur
	}
}

// stop closes the database and stops the spawned processes, which end
// their parked waits and finish the requests in flight.
func (s *server) stop() {
	if s.db != nil {
		s.db.Close()
	}
	for _, c := range s.children {
		c.cmd.Process.Signal(os.Interrupt)
	}
	for _, c := range s.children {
		c.wait()
	}
}

// agents makes n agents of one owner (owner/prefix0, owner/prefix1, …)
// with a token each, and a client for each on one shared transport.
func (s *server) agents(ctx context.Context, owner, prefix string, n int) ([]*client, error) {
	owner = s.prefix + owner
	if _, err := s.hub.User(ctx, owner); err != nil {
		if _, err := s.hub.CreateUser(ctx, owner, ""); err != nil {
			return nil, err
		}
	}
	var made atomic.Int64
	if n > 100 {
		defer progress(s.progress, fmt.Sprintf("making %d agents", n), &made)()
	}
	hc := newHTTPClient()
	out := make([]*client, n)
	errs := make([]error, n)
	// Several at once: the store commits them in groups.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			slug := fmt.Sprintf("%s%d", prefix, i)
			if _, errs[i] = s.hub.CreateAgent(ctx, hub.AgentSpec{Handle: owner + "/" + slug}); errs[i] != nil {
				return
			}
			var secret string
			if _, secret, errs[i] = s.hub.MintToken(ctx, hub.TokenSpec{Owner: owner, Agent: slug}); errs[i] != nil {
				return
			}
			// Spread over the replicas, as a round-robin load balancer would.
			out[i] = &client{url: s.urls[i%len(s.urls)], token: secret, handle: owner + "/" + slug, http: hc}
			made.Add(1)
		})
	}
	wg.Wait()
	return out, cmp.Or(errs...)
}

// senders makes n agents of owner that send to one more agent of it, the
// sink.
func (s *server) senders(ctx context.Context, owner string, n int) ([]*sender, error) {
	sink, err := s.agents(ctx, owner, "sink", 1)
	if err != nil {
		return nil, err
	}
	cs, err := s.agents(ctx, owner, "s", n)
	if err != nil {
		return nil, err
	}
	out := make([]*sender, n)
	for i, c := range cs {
		out[i] = &sender{c: c, peer: sink[0].handle}
	}
	return out, nil
}
