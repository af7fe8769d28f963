package channel

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP Go SDK (v1.8) sends and receives only the methods of the MCP
// specification: it has no way to send a notification of another method
// from the server, and it answers a client's notification of another
// method with nothing but an error in its log. Claude Code's channel
// contract is two such notifications each way, so the channel wraps the
// stdio connection beneath the SDK's server: it writes its own
// notifications on the same connection (whose writes the SDK serializes,
// as every Connection must allow concurrent writes), and takes Claude
// Code's permission requests off it before the SDK sees them. Everything
// else passes through untouched.

// Claude Code's channel methods.
const (
	methodChannel           = "notifications/claude/channel"
	methodPermissionRequest = "notifications/claude/channel/permission_request"
	methodPermission        = "notifications/claude/channel/permission"
)

// stdio is the stdio transport with the channel's own notifications.
type stdio struct {
	inner  mcp.Transport
	onPerm func(raw json.RawMessage) // told each permission request

	mu   sync.Mutex
	conn mcp.Connection // once connected
	up   chan struct{}  // closed when conn is set
}

func newStdio(in io.Reader, out io.Writer, onPerm func(json.RawMessage)) *stdio {
	return &stdio{inner: &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}, onPerm: onPerm, up: make(chan struct{})}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Connect implements mcp.Transport.
func (t *stdio) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	close(t.up)
	return &stdioConn{Connection: c, t: t}, nil
}

// notify writes a notification of method with params on the connection.
func (t *stdio) notify(ctx context.Context, method string, params any) error {
	select {
	case <-t.up:
	case <-ctx.Done():
		return ctx.Err()
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	t.mu.Lock()
	c := t.conn
	t.mu.Unlock()
	return c.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}

// stdioConn takes permission requests off the connection.
type stdioConn struct {
	mcp.Connection
	t *stdio
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == methodPermissionRequest {
			go c.t.onPerm(req.Params)
			continue
		}
		return msg, nil
	}
}
