package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/config"
)

// runHealth: palaver health [--addr HOST:PORT] asks the server listening on
// addr (PALAVER_ADDR, as serve reads it) for GET /readyz and exits 0 when it
// can read its database, 1 otherwise: a probe for container health checks
// in an image with no curl.
func runHealth(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "health", "health [--addr 127.0.0.1:8420]")
	cfg := config.Default()
	cfg.AddrFlag(fs, e.getenv)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	url, err := readyURL(cfg.Addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no answer from %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprint(e.stdout, string(body))
	return nil
}

// readyURL is the /readyz URL of a server listening on addr.
func readyURL(addr string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("--addr %q: give host:port, like 127.0.0.1:8420", addr)
	}
	return "http://" + loopbackIfAny(addr) + "/readyz", nil
}

// loopbackIfAny is addr (host:port) with an address that means every
// interface (0.0.0.0, ::, none) made 127.0.0.1, where this machine reaches
// it.
func loopbackIfAny(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}
