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
	"sync/atomic"
	"time"
)

// client posts JSON-RPC tools/call requests to /mcp/ as one agent. Each
// call is one request on a keep-alive connection; ids correlate requests and
// responses.
type client struct {
	url   string
	token string
	http  *http.Client
	id    atomic.Int64
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
		return fmt.Errorf("%s: HTTP %d: %s", tool, resp.StatusCode, bytes.TrimSpace(raw))
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
		return fmt.Errorf("%s: %s", tool, rpc.Error.Message)
	case rpc.Result.IsError:
		return fmt.Errorf("%s: %s", tool, rpc.Result.StructuredContent)
	}
	if out != nil {
		return json.Unmarshal(rpc.Result.StructuredContent, out)
	}
	return nil
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
