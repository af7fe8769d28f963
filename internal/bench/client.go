// Package bench is Palaver's load generator (DESIGN.md §17): it speaks MCP
// over HTTP to a running server, measures the machine's floors in the same
// run, and reports latencies, throughput and the server's resources.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// client posts JSON-RPC tools/call requests to /mcp/ as one agent. Each
// call is one request on a keep-alive connection; ids correlate requests and
// responses.
type client struct {
	url    string
	token  string
	handle string // the agent's, owner/slug
	http   *http.Client
	id     atomic.Int64
}

// newHTTPClient keeps one connection per concurrent caller, so a parked
// waiter holds its own TCP connection as a real agent does.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 20000,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// refusal is the server's answer refusing a call: an HTTP status other
// than 200, a JSON-RPC error or a tool error. Any other error of call is the
// server's not answering: a connection refused or cut, a body cut short.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// call invokes a tool and decodes its structured result into out.
func (c *client) call(ctx context.Context, tool string, args any, out any) error {
	id := c.id.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &refusal{fmt.Sprintf("%s: HTTP %d: %s", tool, resp.StatusCode, bytes.TrimSpace(raw))}
	}
	var rpc struct {
		ID     int64 `json:"id"`
		Result struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	switch {
	case rpc.ID != id:
		return fmt.Errorf("%s: response id %d for request %d", tool, rpc.ID, id)
	case rpc.Error != nil:
		return &refusal{fmt.Sprintf("%s: %s", tool, rpc.Error.Message)}
	case rpc.Result.IsError:
		return &refusal{fmt.Sprintf("%s: %s", tool, rpc.Result.StructuredContent)}
	}
	if out != nil {
		return json.Unmarshal(rpc.Result.StructuredContent, out)
	}
	return nil
}

// send posts one message. A send the server did not send (denied by a
// brake, held for review) is an error here, with the server's reason.
func (c *client) send(ctx context.Context, conv, body string) error {
	var out struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	if err := c.call(ctx, "send_message", map[string]any{"conversation_id": conv, "body": body}, &out); err != nil {
		return err
	}
	if out.Status != "sent" {
		return fmt.Errorf("send_message: %s: %s", out.Status, out.Reason)
	}
	return nil
}

// sender is an agent sending to one peer in threads of their own. It moves
// to a new thread every perConversation sends, so the budget brake, on at
// its default, never trips.
type sender struct {
	c    *client
	peer string // the peer's handle
	conv string
	sent int
}

// ready starts a new thread when the current one has had its share of
// sends (or there is none yet).
func (s *sender) ready(ctx context.Context) error {
	if s.conv != "" && s.sent < perConversation {
		return nil
	}
	var out struct {
		ConversationID string `json:"conversation_id"`
	}
	if err := s.c.call(ctx, "create_thread", map[string]any{"title": "load", "participants": []string{s.peer}}, &out); err != nil {
		return err
	}
	s.conv, s.sent = out.ConversationID, 0
	return nil
}

// send sends body into the current thread, starting a new one first if
// needed.
func (s *sender) send(ctx context.Context, body string) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	s.sent++
	return s.c.send(ctx, s.conv, body)
}

// filler pads message bodies to bodySize bytes: a typical short ask.
const filler = "Please look at the change to the parser and tell me whether the new error messages read well; " +
	"I will wait for your answer before I merge it into the main branch, and then start on the docs for it as agreed earlier today."

// bodySize is the size of a benchmark message body in bytes.
const bodySize = 200

// body is text padded to bodySize bytes (text first, so a time stamp in
// front stays readable).
func body(text string) string {
	return (text + " " + filler + filler)[:bodySize]
}

// failures counts a workload's errors and keeps the first, for the
// report.
type failures struct {
	mu    sync.Mutex
	n     int64
	first string
}

func (f *failures) add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.first == "" {
		f.first = err.Error()
	}
}

// result is the count and the first error's text.
func (f *failures) result() (int64, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.first
}

// latencies collects durations and summarizes them.
type latencies []time.Duration

// Summary is a latency distribution in milliseconds.
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

func (l latencies) summary() Summary {
	if len(l) == 0 {
		return Summary{}
	}
	s := append(latencies(nil), l...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) float64 {
		i := int(q * float64(len(s)-1))
		return float64(s[i].Microseconds()) / 1000
	}
	return Summary{Count: len(s), P50: at(0.50), P90: at(0.90), P99: at(0.99), P999: at(0.999), Max: at(1)}
}
