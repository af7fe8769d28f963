package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// A parked wait costs, for as long as it waits, the stack of the
// request's goroutine, and a goroutine's stack keeps the size of the
// deepest call it made (§17; hub.Waiting). So the lean path runs a tool
// that waits taken apart: the request's goroutine only parks, and
// everything else — reading the arguments, the hub's reads, the answer
// and its encoding — runs off it (hub.OffStack).

// parker is a tool's handler taken apart at its waits.
type parker interface {
	step() (over bool) // runs up to the next wait, or to the end
	sleep()            // waits; runs nothing else
	answer() (any, error)
	close() // gives back what the call holds; may be called again
}

// newParkingTool is newTool for a handler that waits: start begins the
// call, and the parker it returns carries it on. Called whole (the SDK
// path), it runs its steps off the caller's goroutine too.
func newParkingTool[In any](s toolSpec, start func(ctx context.Context, c *call, in In) (parker, error)) toolDef {
	d := newTool(s, func(ctx context.Context, c *call, in In) (any, error) {
		p, err := start(ctx, c, in)
		if err != nil {
			return nil, err
		}
		defer p.close()
		for {
			var over bool
			hub.OffStack(func() { over = p.step() })
			if over {
				return p.answer()
			}
			p.sleep()
		}
	})
	d.parks = func(ctx context.Context, c *call, raw json.RawMessage) (parker, error) {
		var in In
		if err := d.args.Decode(raw, &in); err != nil {
			return nil, err
		}
		return start(ctx, c, in)
	}
	return d
}

// callParked is callTool for a tool that parks (toolDef.parks): on this
// goroutine it only sleeps between the steps.
func (s *Server) callParked(ctx context.Context, p *profile, d toolDef, args json.RawMessage) (res *mcp.CallToolResult, err error) {
	var t *toolCall
	var pk parker
	hub.OffStack(func() {
		t = s.beginCall(ctx, p, d)
		if e := t.allowed(ctx); e != nil {
			res, err = t.refuse(ctx, e)
			return
		}
		var e error
		if pk, e = d.parks(ctx, t.c, args); e != nil {
			res, err = t.end(ctx, nil, e)
		}
	})
	if pk == nil {
		return res, err
	}
	defer pk.close()
	for {
		var over bool
		hub.OffStack(func() { over = pk.step() })
		if over {
			break
		}
		pk.sleep()
	}
	hub.OffStack(func() {
		v, e := pk.answer()
		res, err = t.end(ctx, v, e)
	})
	return res, err
}
