package a2aclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// The remote outbox (§18): a message to a remote A2A agent is a call,
// written by the hub in the send's transaction, made by an outbox
// dispatcher with each remote agent its own target — so a dead remote
// holds up only its own calls — and retried on Retry's schedule with the
// same A2A messageId. A call whose answer is a task still working is
// asked after on the same schedule until the task ends or Retry.For
// passes. The answer becomes the remote agent's message in the
// conversation, sent once (its client_msg_id is the call's id); a
// refusal, a failed task or a remote that never answered becomes an
// error event post, and each remote keeps its latest delivery's problem
// for its owner to see.

// Attempt is how one attempt at a remote call went.
type Attempt struct {
	Reply *Reply // nil when none came
	Err   error
}

// OK reports whether the call is done: an answer that ends it, or a
// refusal that trying again would not change.
func (a Attempt) OK() bool {
	var refused *RPCError
	if errors.As(a.Err, &refused) {
		return true
	}
	return a.Err == nil && a.Reply != nil && a.Reply.Done()
}

// The remote outbox's numbers (§18).
const (
	CallTimeout = 30 * time.Second // one call, from connecting to the answer's last byte
	Concurrency = 4                // calls to one remote in flight at once, in each server process
	Rate        = 2                // calls started a second to one remote
	Burst       = 4
	lease       = 2 * time.Minute
	batch       = 100
)

// Retry is how a remote call is retried, and a task asked after: after
// about 2 s, 4 s, 8 s … then every 10 minutes, for a day.
var Retry = outbox.Backoff{First: 2 * time.Second, Max: 10 * time.Minute, Jitter: 0.2, For: 24 * time.Hour}

// What became of a remote call's attempt.
const (
	Delivered = outbox.Delivered // the call is done: its answer (or why none comes) is in the conversation
	Failed    = outbox.Failed    // no answer yet, or the task still works: asked again later
	GaveUp    = outbox.GaveUp    // Retry.For passed: the conversation is told
)

// Outcomes lists every outcome of a remote call's attempt.
var Outcomes = []string{Delivered, Failed, GaveUp}

// newOutbox is the dispatcher of the remote calls, stepping when the hub
// rings its RemoteKick.
func (m *Remotes) newOutbox() *outbox.Dispatcher[*hub.RemoteCall, Attempt] {
	o := &outbox.Dispatcher[*hub.RemoteCall, Attempt]{Name: "remote agents", Limits: outbox.Limits{Concurrency: Concurrency, Rate: Rate, Burst: Burst,
		Lease: lease, Batch: batch, Retry: Retry}, Now: m.hub.Now, Log: m.log, Kick: m.hub.RemoteKick()}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := m.store.DueRemotes(ctx, now)
		if err != nil {
			return nil, hub.AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*hub.RemoteCall, error) {
		return hub.ClaimEach(ctx, m.store, want, func(tx hub.Tx, agentID string, n int) ([]*hub.RemoteCall, error) {
			return tx.ClaimRemoteCalls(ctx, agentID, now, until, n)
		})
	}
	o.Send = m.call
	o.Record = m.record
	return o
}

// call sends the call's message, in the conversation's context, or, once
// the remote made a task of it, asks after that task.
func (m *Remotes) call(ctx context.Context, c *hub.RemoteCall, _ time.Time) Attempt {
	cctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	card := &Card{Endpoint: c.Endpoint, Version: c.Version}
	var reply *Reply
	var err error
	if c.TaskID != "" {
		reply, err = m.client.GetTask(cctx, card, c.Credential, m.hub.AllowFetch, c.TaskID)
	} else {
		reply, err = m.client.Send(cctx, card, c.Credential, m.hub.AllowFetch, c.ID, c.ConversationID, c.Continues, c.Body)
	}
	// The answer sent into a task that asked for input may come back
	// with the task as it stood before the remote took it in: still
	// asking. It is asked after, as a task at work, for what it does
	// with the answer.
	if err == nil && reply != nil && c.TaskID == "" && c.Continues != "" && reply.TaskID == c.Continues && reply.State == StateInputRequired {
		reply.State, reply.Text = StateWorking, ""
	}
	return Attempt{Reply: reply, Err: err}
}

// Deliver is one step of the remote outbox, for tests and tools: it
// claims the calls due, makes them, and returns once they ended. palaver
// serve runs Run instead.
func (m *Remotes) Deliver(ctx context.Context) (hub.Pass, error) {
	if m.client == nil {
		return hub.Pass{Outcomes: map[string]int{}}, nil
	}
	return hub.DeliverOnce(ctx, m.outbox.Dispatch)
}

// Run makes remote calls until ctx ends, as the webhooks' Run does,
// telling count (unless nil) each attempt's outcome: one of Outcomes.
func (m *Remotes) Run(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	if m.client == nil {
		<-ctx.Done()
		return
	}
	var told func(string)
	if count != nil {
		told = func(outcome string) { count(outcome, 1) }
	}
	m.outbox.Run(ctx, period, told)
}

// record does what an attempt's outcome says: a done call's answer goes
// into the conversation and the call leaves the outbox; a failed one is
// due again at retry (with the task it made, if any); one given up says
// so in the conversation.
func (m *Remotes) record(ctx context.Context, c *hub.RemoteCall, a Attempt, outcome string, retry time.Time) error {
	now := m.hub.Now()
	problem := ""
	if a.Err != nil {
		problem = hub.Preview(hub.CleanText(a.Err.Error()), hub.CallError)
	}
	if outcome == outbox.Failed {
		r := *c
		r.Attempts, r.DueAt, r.LastError = c.Attempts+1, retry, problem
		if a.Reply != nil {
			r.TaskID, r.LastError = a.Reply.TaskID, ""
			// What the task says while it works is a task event post, once
			// for each thing it says; its id comes from the words, so one
			// posted before a crash is not posted again.
			if status := a.Reply.State + "\n" + a.Reply.Text; a.Reply.Text != "" && status != c.TaskStatus {
				sum := sha256.Sum256([]byte(status))
				meta, _ := json.Marshal(map[string]string{"task_id": a.Reply.TaskID, "state": a.Reply.State})
				in := hub.SendInput{ConversationID: c.ConversationID, Format: hub.FormatText, Kind: "task", Body: a.Reply.Text, Metadata: meta,
					ClientMsgID: c.ID + "." + hex.EncodeToString(sum[:8])}
				if err := m.post(ctx, c, in); err != nil {
					m.log.Warn("posting a remote agent's task status", "agent", c.AgentID, "call", c.ID, "err", err)
				} else {
					r.TaskStatus = status
				}
			}
		}
		return m.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
			if err := tx.SetRemoteDelivery(ctx, c.AgentID, now, r.LastError); err != nil {
				return nil, err
			}
			return nil, tx.RescheduleRemoteCall(ctx, &r)
		})
	}
	// The answer, or what stood in its way, is posted once: its
	// client_msg_id is the call's id, so a post that got in before a
	// crash is not made again.
	in := hub.SendInput{ConversationID: c.ConversationID, Format: hub.FormatText, ClientMsgID: c.ID}
	switch {
	case outcome == outbox.GaveUp && c.LastError != "":
		in.Kind, in.Body = "error", fmt.Sprintf("The remote agent at %s could not be reached for %s; the last try: %s", c.CardURL, Retry.For, c.LastError)
	case outcome == outbox.GaveUp:
		in.Kind, in.Body = "error", fmt.Sprintf("The remote agent at %s had not finished its task after %s; no answer came", c.CardURL, Retry.For)
	case a.Err != nil:
		in.Kind, in.Body = "error", "The remote agent at "+c.CardURL+" refused the message: "+problem
	case a.Reply.State == StateInputRequired:
		// A question back: the sender is told, and their next message
		// here (or anyone's) is its answer, sent into the same task.
		in.Body, in.Mentions = a.Reply.Text, []string{c.SenderHandle}
		if in.Body == "" {
			in.Body = "(the remote agent needs more from you to go on, without saying what)"
		}
		in.Body += "\n\n(It waits for your answer: the next message to it in this conversation continues its task.)"
	case a.Reply.State == StateMessage || a.Reply.State == StateCompleted:
		in.Body = a.Reply.Text
		if in.Body == "" && len(a.Reply.Artifacts) == 0 {
			in.Body = "(the remote agent answered without words)"
		}
	default:
		in.Kind, in.Body = "error", fmt.Sprintf("The remote agent's task ended %s", a.Reply.State)
		if a.Reply.Text != "" {
			in.Body += ": " + a.Reply.Text
		}
	}
	if in.Kind == "error" {
		in.Mentions = []string{c.SenderHandle}
		problem = in.Body
	}
	posts := []hub.SendInput{in}
	if in.Body == "" {
		posts = nil
	}
	if a.Reply != nil && a.Reply.State == StateCompleted {
		posts = append(posts, artifactPosts(c, a.Reply.Artifacts)...)
	}
	for _, in := range posts {
		if err := m.post(ctx, c, in); err != nil {
			m.log.Warn("posting a remote agent's answer", "agent", c.AgentID, "call", c.ID, "err", err)
			problem = hub.Preview("its answer could not be posted: "+hub.CleanText(hub.AsError(err).Msg), hub.CallError)
		}
	}
	return m.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		if err := tx.SetRemoteDelivery(ctx, c.AgentID, now, problem); err != nil {
			return nil, err
		}
		// The task it asks for input in is what the conversation's next
		// message to it continues; the one this message answered is done
		// waiting, whatever became of it.
		if a.Reply != nil && a.Reply.State == StateInputRequired && a.Reply.TaskID != "" {
			if err := tx.SetRemoteTask(ctx, c.AgentID, c.ConversationID, a.Reply.TaskID); err != nil {
				return nil, err
			}
		} else if c.Continues != "" {
			if err := tx.ClearRemoteTask(ctx, c.AgentID, c.ConversationID, c.Continues); err != nil {
				return nil, err
			}
		}
		return nil, tx.DeleteRemoteCall(ctx, c.ID)
	})
}

// post sends in as the call's remote agent, its brakes and all, with the
// card's URL in its provenance; a post already made (its client_msg_id
// taken) is not an error.
func (m *Remotes) post(ctx context.Context, c *hub.RemoteCall, in hub.SendInput) error {
	a, err := m.store.AgentByID(ctx, c.AgentID)
	if err != nil {
		return hub.AsError(err)
	}
	owner, err := m.store.UserByID(ctx, a.OwnerID)
	if err != nil {
		return hub.AsError(err)
	}
	_, err = m.hub.SendFromRemote(ctx, &hub.Caller{Agent: a, Owner: owner}, in, c.CardURL)
	if e := hub.AsError(err); err != nil && e.Kind == hub.KindConflict {
		return nil
	}
	return err
}

// artifactPosts are a completed task's artifacts as the remote's
// messages, one each, after its status's words: an artifact's text is the
// message; its data parts are in its metadata ("data", with the
// artifact's id and name) and, when it has no text, also its words, as
// JSON. Each post's client_msg_id is the call's and the artifact's place,
// so a crash posts none twice.
func artifactPosts(c *hub.RemoteCall, arts []Artifact) []hub.SendInput {
	var posts []hub.SendInput
	for i, art := range arts {
		in := hub.SendInput{ConversationID: c.ConversationID, Format: hub.FormatText, ClientMsgID: fmt.Sprintf("%s.a%d", c.ID, i+1), Body: art.Text}
		meta := map[string]any{"artifact_id": art.ID}
		if art.Name != "" {
			meta["name"] = art.Name
		}
		if len(art.Data) > 0 {
			data, _ := json.Marshal(art.Data)
			if in.Body == "" {
				in.Body = string(data)
			}
			meta["data"] = json.RawMessage(data)
		}
		b, _ := json.Marshal(meta)
		if len(b) > hub.MaxMetadata {
			delete(meta, "data")
			meta["data_too_large"] = true
			b, _ = json.Marshal(meta)
		}
		in.Metadata = b
		if in.Body == "" {
			in.Body = "(an artifact without words or data)"
		}
		in.Body = hub.Preview(in.Body, hub.MaxBody)
		posts = append(posts, in)
	}
	return posts
}
