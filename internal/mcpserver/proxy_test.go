package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/servertest"
)

// tokenProxy is the reverse proxy TestConformance puts in front of the
// server at target: it adds the agent's token to every request and passes
// everything else through, the Host header included. transport, when not
// nil, carries its requests to the server (default http.DefaultTransport).
//
// It reads each request's whole body before passing the request on, as a
// buffering proxy does. Streaming the body through instead breaks now and
// then: Go's HTTP/1 server, when a handler starts its response, reads what
// is left of the request's body and closes it (net/http's ResponseWriter
// documentation; golang/go#40747), while the proxy's transport, on a
// goroutine of its own, still reads that body once more after its last
// byte to see it end. When the server answered first, that read fails,
// the transport drops its connection to the server, and the answer being
// relayed is cut off ("ReverseProxy read error during body copy: … use of
// closed network connection"): the suite's fetch calls fail with
// "terminated", and its own raw-HTTP calls, which wait for the answer's
// end alone, never finish.
func tokenProxy(t *testing.T, target *url.URL, token string, transport http.RoundTripper) *httptest.Server {
	t.Helper()
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // the suite's own Host, for its DNS-rebinding checks
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		Transport:     transport,
		FlushInterval: -1,
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "the proxy got part of the request's body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}

// exchangeHeader names each exchange of TestTokenProxyUnderLoad, so that
// unluckyTransport knows which client is waiting on which request.
const exchangeHeader = "X-Test-Exchange"

// unluckyTransport carries the proxy's requests as http.DefaultTransport
// does, on the schedule a busy machine gives an exchange now and then: the
// transport's goroutine that writes a request body to the server, having
// sent its last byte, is held before it reads once more to see the body
// end — until the proxy's client has the response's headers — and the
// proxy's relay of the response is held after its first read until that
// last read is done (and, if it failed, until the transport has torn the
// connection down). Each exchange's client says when it has the headers.
type unluckyTransport struct {
	base *http.Transport

	mu        sync.Mutex
	exchanges map[string]*exchange
}

// exchange is one request's schedule.
type exchange struct {
	headers    chan struct{} // closed when the client has the response's headers
	ended      chan struct{} // closed once the body's last read returned
	endErr     error         // what it returned
	connClosed chan struct{} // closed when the connection carrying it closes
}

func newUnluckyTransport() *unluckyTransport {
	u := &unluckyTransport{base: http.DefaultTransport.(*http.Transport).Clone(), exchanges: map[string]*exchange{}}
	dial := u.base.DialContext
	u.base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c, closed: make(chan struct{})}, nil
	}
	return u
}

// start makes an exchange's schedule; the client calls gotHeaders.
func (u *unluckyTransport) start(id string) (gotHeaders func()) {
	e := &exchange{headers: make(chan struct{}), ended: make(chan struct{}), connClosed: make(chan struct{})}
	u.mu.Lock()
	u.exchanges[id] = e
	u.mu.Unlock()
	return sync.OnceFunc(func() { close(e.headers) })
}

func (u *unluckyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	u.mu.Lock()
	e := u.exchanges[req.Header.Get(exchangeHeader)]
	u.mu.Unlock()
	if e == nil {
		return u.base.RoundTrip(req)
	}
	var conn *watchedConn
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { conn, _ = info.Conn.(*watchedConn) },
	}))
	if req.Body == nil || req.ContentLength <= 0 {
		close(e.ended)
	} else {
		req.Body = &heldBody{ReadCloser: req.Body, left: req.ContentLength, e: e}
	}
	res, err := u.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if conn != nil {
		go func() {
			<-conn.closed
			close(e.connClosed)
		}()
	}
	res.Body = &heldRelay{ReadCloser: res.Body, e: e}
	return res, nil
}

// heldBody is a request body whose read past its last byte waits for the
// client to have the response's headers.
type heldBody struct {
	io.ReadCloser
	left int64
	e    *exchange
	once sync.Once
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.left > 0 {
		n, err := b.ReadCloser.Read(p)
		b.left -= int64(n)
		return n, err
	}
	<-b.e.headers
	n, err := b.ReadCloser.Read(p)
	b.once.Do(func() {
		b.e.endErr = err
		close(b.e.ended)
	})
	return n, err
}

// heldRelay is a response body whose reads after the first wait for the
// request body's last read, and, when that failed, for the connection to
// close.
type heldRelay struct {
	io.ReadCloser
	e     *exchange
	reads int
}

func (r *heldRelay) Read(p []byte) (int, error) {
	if r.reads++; r.reads > 1 {
		<-r.e.ended
		if r.e.endErr != nil && !errors.Is(r.e.endErr, io.EOF) {
			<-r.e.connClosed
		}
	}
	return r.ReadCloser.Read(p)
}

// watchedConn tells when it is closed.
type watchedConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// TestTokenProxyUnderLoad: through the conformance run's token proxy, many
// exchanges at once — listings, calls, long-polled waits — each finish
// with the whole answer, on the schedule that once in a while cut one off
// mid-answer (unluckyTransport), while other clients hang up mid-body and
// mid-wait; and afterwards neither the proxy nor the server has a request
// left running.
func TestTokenProxyUnderLoad(t *testing.T) {
	ts := newTestServer(t)
	mux := http.NewServeMux()
	ts.srv.Register(mux)
	server := httptest.NewServer(mux) // the MCP face as palaver serve mounts it
	t.Cleanup(server.Close)
	target, _ := url.Parse(server.URL)
	transport := newUnluckyTransport()
	proxy := tokenProxy(t, target, ts.tokens["alice/planner"], transport)

	bodies := map[string]string{
		"tools/list": `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`,
		"whoami":     `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
		"wait":       `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"timeout_s":1}}}`,
	}
	kinds := []string{"tools/list", "whoami", "tools/list", "wait", "tools/list", "whoami"}
	client := &http.Client{Timeout: 30 * time.Second}
	exchange := func(id int, kind string) error {
		gotHeaders := transport.start(fmt.Sprint(id))
		defer gotHeaders()
		req, _ := http.NewRequest(http.MethodPost, proxy.URL+"/mcp/", strings.NewReader(fmt.Sprintf(bodies[kind], id)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(exchangeHeader, fmt.Sprint(id))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		gotHeaders()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return fmt.Errorf("%s: the answer was cut off after %d bytes: %w", kind, len(b), err)
		}
		var rpc struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &rpc) != nil || rpc.ID != id || len(rpc.Result) == 0 {
			return fmt.Errorf("%s: %d %.200s", kind, resp.StatusCode, b)
		}
		return nil
	}
	// hangUpMidBody sends a request whose body stops short of its length,
	// and hangs up.
	hangUpMidBody := func(base string) {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp/ HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Authorization: Bearer %s\r\nContent-Length: 400\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"", strings.TrimPrefix(base, "http://"), ts.tokens["alice/planner"])
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	workers := 16
	for w := range workers {
		wg.Go(func() {
			for i, kind := range kinds {
				if err := exchange(w*len(kinds)+i+1, kind); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
			}
		})
		wg.Go(func() { hangUpMidBody(proxy.URL) })
		wg.Go(func() { hangUpMidBody(server.URL) })
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d exchanges through the proxy did not finish whole:\n%s", len(failures), workers*len(kinds), strings.Join(failures, "\n"))
	}

	// Long waits whose clients hang up while they are parked end at once.
	hangUp, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 3 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(hangUp, http.MethodPost, proxy.URL+"/mcp/",
				strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_for_messages","arguments":{"timeout_s":50}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if resp, err := client.Do(req); err == nil {
				t.Errorf("a wait answered %d before its client hung up", resp.StatusCode)
				resp.Body.Close()
			}
		})
	}
	servertest.Parked(t, ts.waker, 3)
	cancel()
	wg.Wait()
	servertest.Parked(t, ts.waker, 0)

	// Closing waits for every request each server is still answering.
	closed := make(chan struct{})
	go func() {
		proxy.Close()
		server.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("a request was still running 20 s after the last client was done or gone")
	}
}
