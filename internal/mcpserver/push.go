package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// Push where a client holds a stream (§19): a profile that declares
// resources.subscribe serves the 2026-07-28 subscriptions/listen for its
// inbox — the SDK acknowledges the subscription and holds the stream open,
// and each change of the agent's inbox (hub.WatchInbox) becomes a
// notifications/resources/updated on it. The stream ends when the client
// cancels it, when the server shuts down and when the token stops being
// good. Every other profile pushes nothing.

// pushSpec is what a profile pushes: the URIs of its inbox a client may
// subscribe to (its own and its alias).
type pushSpec struct {
	inbox []string
}

// pusher serves a profile's listens.
type pusher struct {
	s     *Server
	p     *profile
	inbox []string
	send  mcp.MethodHandler // the SDK's own sending of a message to the client

	mu    sync.Mutex
	acked map[*mcp.ServerSession]chan any // a listen waiting for its acknowledgement: its subscription id
}

// Method names of the subscriptions (SEP-2575) and the older era's.
const (
	methodListen      = "subscriptions/listen"
	methodAcked       = "notifications/subscriptions/acknowledged"
	methodUpdated     = "notifications/resources/updated"
	methodSubscribe   = "resources/subscribe"
	methodUnsubscribe = "resources/unsubscribe"
)

// subscribeOptions are the server options that declare resources.subscribe:
// which URIs may be subscribed to is checked before the SDK subscribes.
func subscribeOptions(o *mcp.ServerOptions) {
	o.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	o.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

// addPush makes p serve listens for its inbox.
func (s *Server) addPush(p *profile, spec *pushSpec) {
	ps := &pusher{s: s, p: p, inbox: spec.inbox, acked: map[*mcp.ServerSession]chan any{}}
	p.mcp.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		ps.send = next
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == methodAcked && err == nil {
				ps.wasAcked(req)
			}
			return res, err
		}
	})
	p.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case methodListen:
				return ps.listen(ctx, next, req)
			case methodSubscribe, methodUnsubscribe:
				// The older era's subscriptions need a stream of the session,
				// which this stateless server does not keep.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: subscribe with subscriptions/listen, in protocol version 2026-07-28"}
			case "initialize":
				res, err := next(ctx, method, req)
				if r, ok := res.(*mcp.InitializeResult); ok && r.Capabilities != nil && r.Capabilities.Resources != nil {
					// Nothing is pushed in the older era: no subscribe.
					caps := *r.Capabilities.Resources
					caps.Subscribe = false
					r.Capabilities.Resources = &caps
				}
				return res, err
			}
			return next(ctx, method, req)
		}
	})
}

// noPush makes p refuse listens: it pushes nothing (§10.1).
func noPush(p *profile) {
	p.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == methodListen {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: Palaver pushes nothing; wait with the wait_for_messages tool"}
			}
			return next(ctx, method, req)
		}
	})
}

// listen serves one subscriptions/listen: it follows the caller's inbox
// from before the SDK acknowledges the subscription, so no change after
// the acknowledgement is missed, and ends the SDK's listen when the
// following ends.
func (ps *pusher) listen(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	lr, ok := req.(*mcp.SubscriptionsListenRequest)
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if !ok || ss == nil || lr.Params == nil || lr.Params.Notifications == nil {
		return next(ctx, methodListen, req) // the SDK's own refusals
	}
	for _, uri := range lr.Params.Notifications.ResourceSubscriptions {
		if !slices.Contains(ps.inbox, uri) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("invalid params: %s cannot be subscribed to; subscribe to %s, whose changes are pushed", hub.Preview(uri, 100), strings.Join(ps.inbox, " or "))}
		}
	}
	uris := lr.Params.Notifications.ResourceSubscriptions
	if len(uris) == 0 {
		return next(ctx, methodListen, req)
	}
	c := &call{srv: ps.s, prof: ps.p, tool: methodListen, caller: callerFrom(ctx)}
	if c.caller == nil {
		return nil, c.resourceError(ctx, noCaller(ctx))
	}
	listenCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	acked := ps.expect(ss)
	defer ps.forget(ss)
	started, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		defer cancel() // the SDK's listen returns its result: the stream ends
		first, id := true, any(nil)
		ended <- ps.s.hub.WatchInbox(listenCtx, c.caller, func() bool {
			if first {
				first = false
				close(started)
				select {
				case id = <-acked:
					return true
				case <-listenCtx.Done():
					return false
				}
			}
			for _, uri := range uris {
				p := &mcp.ResourceUpdatedNotificationParams{URI: uri, Meta: mcp.Meta{mcp.MetaKeySubscriptionID: id}}
				if _, err := ps.send(listenCtx, methodUpdated, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: ss, Params: p}); err != nil {
					return false // the stream is gone
				}
			}
			return true
		})
	}()
	select {
	case <-started:
	case err := <-ended:
		return nil, c.resourceError(ctx, err) // refused before it began (a scope, too many waits)
	}
	res, err := next(listenCtx, methodListen, req)
	cancel()
	<-ended
	return res, err
}

// expect registers a listen of session ss waiting for its acknowledgement.
func (ps *pusher) expect(ss *mcp.ServerSession) <-chan any {
	ch := make(chan any, 1)
	ps.mu.Lock()
	ps.acked[ss] = ch
	ps.mu.Unlock()
	return ch
}

func (ps *pusher) forget(ss *mcp.ServerSession) {
	ps.mu.Lock()
	delete(ps.acked, ss)
	ps.mu.Unlock()
}

// wasAcked tells the listen of the acknowledgement's session that it was
// sent, with the subscription's id.
func (ps *pusher) wasAcked(req mcp.Request) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	var id any
	if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
		id = p.Meta[mcp.MetaKeySubscriptionID]
	}
	ps.mu.Lock()
	ch := ps.acked[ss]
	delete(ps.acked, ss)
	ps.mu.Unlock()
	if ch != nil {
		ch <- id
	}
}
