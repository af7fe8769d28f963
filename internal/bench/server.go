package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/store"
)

// server is a spawned `palaver serve`.
type server struct {
	url  string
	proc proc
	cmd  *exec.Cmd
	hub  *hub.Hub
	db   *store.DB
	// progress receives a line when making many agents takes a while.
	progress io.Writer
}

// spawn starts `palaver serve` on database and opens the database beside
// it, as the admin commands do, to make agents and tokens.
func spawn(ctx context.Context, o Options, database string) (*server, error) {
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
	s := &server{cmd: cmd, proc: proc{pid: cmd.Process.Pid}, progress: o.Progress}
	lines := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`mcp=(http://\S+/mcp/)`)
	last := ""
	for lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
			break
		}
		last = lines.Text()
	}
	if s.url == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("the spawned server did not start: %s", last)
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

// cpu is the server's CPU time so far.
func (s *server) cpu() time.Duration { return s.proc.cpu() }

// rss is the server's resident memory in bytes.
func (s *server) rss() int64 { return s.proc.rss() }

// runtime reads the server's /metrics.
func (s *server) runtime(ctx context.Context) (serverRuntime, error) {
	return readRuntime(ctx, &http.Client{Timeout: 5 * time.Second}, metricsURL(s.url))
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

func (s *server) stop() {
	if s.db != nil {
		s.db.Close()
	}
	s.cmd.Process.Signal(os.Interrupt)
	s.cmd.Wait()
}

// agents makes n agents of one owner (owner/prefix0, owner/prefix1, …)
// with a token each, and a client for each on one shared transport.
func (s *server) agents(ctx context.Context, owner, prefix string, n int) ([]*client, error) {
	if _, err := s.hub.User(ctx, owner); err != nil {
		if _, err := s.hub.CreateUser(ctx, owner, ""); err != nil {
			return nil, err
		}
	}
	if n > 100 {
		fmt.Fprintf(s.progress, "making %d agents\n", n)
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
			out[i] = &client{url: s.url, token: secret, handle: owner + "/" + slug, http: hc}
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
