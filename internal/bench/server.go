package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// runtime reads the server's /metrics.
func (s *server) runtime(ctx context.Context) (serverRuntime, error) {
	return readRuntime(ctx, &http.Client{Timeout: 5 * time.Second}, metricsURL(s.url))
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
