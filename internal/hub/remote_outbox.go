package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/palaverhq/palaver/internal/outbox"
)

// The remote outbox (§18): a message to a remote A2A agent is a call,
// written in the send's transaction, made by an outbox dispatcher with
// each remote agent its own target — so a dead remote holds up only its
// own calls — and retried on RemoteRetry's schedule with the same A2A
// messageId. A call whose answer is a task still working is asked after
// on the same schedule until the task ends or RemoteRetry.For passes. The
// answer becomes the remote agent's message in the conversation, sent once
// (its client_msg_id is the call's id); a refusal, a failed task or a
// remote that never answered becomes an error event post, and each
// remote keeps its latest delivery's problem for its owner to see.

// RemoteCall is a call in the remote outbox: one message to one remote.
type RemoteCall struct {
	ID             string // rmc_…: the A2A messageId, the same on every retry
	AgentID        string // the remote agent's
	ConversationID string // also the A2A contextId
	MessageID      string
	SenderHandle   string // who wrote the message: an error post mentions them
	Body           string
	TaskID         string // the remote's task for it, once it made one
	TaskStatus     string // what the task last said while it worked, posted as a task event post
	CreatedAt      time.Time
	DueAt          time.Time
	Attempts       int
	LastError      string
	// Filled by ClaimRemoteCalls: where and how it goes, and the task of
	// the conversation the remote asked for input in, which this message
	// answers ("" for none).
	CardURL, Endpoint, Version, Credential string
	Continues                              string
}

// The outbox's view of a call (outbox.Row).
func (c *RemoteCall) Target() string    { return c.AgentID }
func (c *RemoteCall) Queued() time.Time { return c.CreatedAt }
func (c *RemoteCall) Failed() int       { return c.Attempts }

// RemoteAttempt is how one attempt at a remote call went.
type RemoteAttempt struct {
	Reply *RemoteReply // nil when none came
	Err   error
}

// OK reports whether the call is done: an answer that ends it, or a
// refusal that trying again would not change.
func (a RemoteAttempt) OK() bool {
	var refused *RemoteRefusal
	if errors.As(a.Err, &refused) {
		return true
	}
	return a.Err == nil && a.Reply != nil && a.Reply.State != RemoteSubmitted && a.Reply.State != RemoteWorking
}

// The remote outbox's numbers (§18).
const (
	RemoteTimeout     = 30 * time.Second // one call, from connecting to the answer's last byte
	RemoteConcurrency = 4                // calls to one remote in flight at once, in each server process
	RemoteRate        = 2                // calls started a second to one remote
	RemoteBurst       = 4
	remoteLease       = 2 * time.Minute
	remoteBatch       = 100
)

// RemoteRetry is how a remote call is retried, and a task asked after:
// after about 2 s, 4 s, 8 s … then every 10 minutes, for a day.
var RemoteRetry = outbox.Backoff{First: 2 * time.Second, Max: 10 * time.Minute, Jitter: 0.2, For: 24 * time.Hour}

type remoteOutbox = outbox.Dispatcher[*RemoteCall, RemoteAttempt]

// What became of a remote call's attempt.
const (
	RemoteDelivered = outbox.Delivered // the call is done: its answer (or why none comes) is in the conversation
	RemoteFailed    = outbox.Failed    // no answer yet, or the task still works: asked again later
	RemoteGaveUp    = outbox.GaveUp    // RemoteRetry.For passed: the conversation is told
)

// RemoteOutcomes lists every outcome of a remote call's attempt.
var RemoteOutcomes = []string{RemoteDelivered, RemoteFailed, RemoteGaveUp}

// queueRemotes puts into the remote outbox, in the transaction that
// stores the events, a call for each text message a remote agent is told
// of by another. It reports whether it queued any.
func (h *Hub) queueRemotes(ctx context.Context, tx Tx, events []*Event) (bool, error) {
	var calls []*RemoteCall
	var ids map[string]bool
	now := h.now()
	for _, e := range events {
		if e.Type != EventMessageNew || e.Message == nil || e.Message.SenderID == e.RecipientID || e.Message.Kind != MessageText ||
			idKind(e.RecipientID) != IDAgent {
			continue
		}
		if ids == nil {
			var err error
			if ids, err = h.remotes.agents(ctx, now, tx.RemoteAgentIDs); err != nil {
				return false, err
			}
		}
		if !ids[e.RecipientID] {
			continue
		}
		calls = append(calls, &RemoteCall{ID: NewID(IDRemoteCall, now), AgentID: e.RecipientID, ConversationID: e.ConversationID,
			MessageID: e.Message.ID, SenderHandle: e.Message.SenderHandle, Body: e.Message.Body, CreatedAt: now, DueAt: now})
	}
	if len(calls) == 0 {
		return false, nil
	}
	return true, tx.InsertRemoteCalls(ctx, calls)
}

// newRemoteOutbox is the hub's remoteOutbox.
func (h *Hub) newRemoteOutbox() *remoteOutbox {
	o := &remoteOutbox{Name: "remote agents", Limits: outbox.Limits{Concurrency: RemoteConcurrency, Rate: RemoteRate, Burst: RemoteBurst,
		Lease: remoteLease, Batch: remoteBatch, Retry: RemoteRetry}, Now: h.now, Log: h.log}
	o.Due = func(ctx context.Context, now time.Time) ([]string, error) {
		ids, err := h.store.DueRemotes(ctx, now)
		if err != nil {
			return nil, AsError(err)
		}
		return ids, nil
	}
	o.Claim = func(ctx context.Context, now, until time.Time, want map[string]int) ([]*RemoteCall, error) {
		var calls []*RemoteCall
		err := h.store.Update(ctx, func(tx Tx) error {
			calls = nil
			for id, n := range want {
				cs, err := tx.ClaimRemoteCalls(ctx, id, now, until, n)
				if err != nil {
					return err
				}
				calls = append(calls, cs...)
			}
			return nil
		})
		if err != nil {
			return nil, AsError(err)
		}
		return calls, nil
	}
	o.Send = func(ctx context.Context, c *RemoteCall, _ time.Time) RemoteAttempt {
		cctx, cancel := context.WithTimeout(ctx, RemoteTimeout)
		defer cancel()
		reply, err := h.remote.Call(cctx, c, h.AllowFetch)
		// The answer sent into a task that asked for input may come back
		// with the task as it stood before the remote took it in: still
		// asking. It is asked after, as a task at work, for what it does
		// with the answer.
		if err == nil && reply != nil && c.TaskID == "" && c.Continues != "" && reply.TaskID == c.Continues && reply.State == RemoteInputRequired {
			reply.State, reply.Text = RemoteWorking, ""
		}
		return RemoteAttempt{Reply: reply, Err: err}
	}
	o.Record = h.recordRemote
	return o
}

// DeliverRemotes is one step of the remote outbox, for tests and tools: it
// claims the calls due, makes them, and returns once they ended. palaver
// serve runs RunRemotes instead.
func (h *Hub) DeliverRemotes(ctx context.Context) (Pass, error) {
	if h.remote == nil {
		return Pass{Outcomes: map[string]int{}}, nil
	}
	return deliverOnce(ctx, h.remoteCalls.Dispatch)
}

// RunRemotes makes remote calls until ctx ends, as RunWebhooks does,
// telling count (unless nil) each attempt's outcome: one of
// RemoteOutcomes.
func (h *Hub) RunRemotes(ctx context.Context, period time.Duration, count func(outcome string, n int)) {
	if h.remote == nil {
		<-ctx.Done()
		return
	}
	var told func(string)
	if count != nil {
		told = func(outcome string) { count(outcome, 1) }
	}
	h.remoteCalls.Run(ctx, period, told)
}

// recordRemote does what an attempt's outcome says: a done call's answer
// goes into the conversation and the call leaves the outbox; a failed one
// is due again at retry (with the task it made, if any); one given up
// says so in the conversation.
func (h *Hub) recordRemote(ctx context.Context, c *RemoteCall, a RemoteAttempt, outcome string, retry time.Time) error {
	now := h.now()
	problem := ""
	if a.Err != nil {
		problem = Preview(cleanText(a.Err.Error()), remoteError)
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
				in := SendInput{ConversationID: c.ConversationID, Format: FormatText, Kind: "task", Body: a.Reply.Text, Metadata: meta,
					ClientMsgID: c.ID + "." + hex.EncodeToString(sum[:8]), remoteURL: c.CardURL}
				if err := h.postRemote(ctx, c.AgentID, in); err != nil {
					h.log.Warn("posting a remote agent's task status", "agent", c.AgentID, "call", c.ID, "err", err)
				} else {
					r.TaskStatus = status
				}
			}
		}
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			if err := tx.SetRemoteDelivery(ctx, c.AgentID, now, r.LastError); err != nil {
				return nil, err
			}
			return nil, tx.RescheduleRemoteCall(ctx, &r)
		})
	}
	// The answer, or what stood in its way, is posted once: its
	// client_msg_id is the call's id, so a post that got in before a
	// crash is not made again.
	in := SendInput{ConversationID: c.ConversationID, Format: FormatText, ClientMsgID: c.ID, remoteURL: c.CardURL}
	switch {
	case outcome == outbox.GaveUp && c.LastError != "":
		in.Kind, in.Body = "error", fmt.Sprintf("The remote agent at %s could not be reached for %s; the last try: %s", c.CardURL, RemoteRetry.For, c.LastError)
	case outcome == outbox.GaveUp:
		in.Kind, in.Body = "error", fmt.Sprintf("The remote agent at %s had not finished its task after %s; no answer came", c.CardURL, RemoteRetry.For)
	case a.Err != nil:
		in.Kind, in.Body = "error", "The remote agent at "+c.CardURL+" refused the message: "+problem
	case a.Reply.State == RemoteInputRequired:
		// A question back: the sender is told, and their next message
		// here (or anyone's) is its answer, sent into the same task.
		in.Body, in.Mentions = a.Reply.Text, []string{c.SenderHandle}
		if in.Body == "" {
			in.Body = "(the remote agent needs more from you to go on, without saying what)"
		}
		in.Body += "\n\n(It waits for your answer: the next message to it in this conversation continues its task.)"
	case a.Reply.State == RemoteMessage || a.Reply.State == RemoteCompleted:
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
	posts := []SendInput{in}
	if in.Body == "" {
		posts = nil
	}
	if a.Reply != nil && a.Reply.State == RemoteCompleted {
		posts = append(posts, remoteArtifactPosts(c, a.Reply.Artifacts)...)
	}
	for _, in := range posts {
		if err := h.postRemote(ctx, c.AgentID, in); err != nil {
			h.log.Warn("posting a remote agent's answer", "agent", c.AgentID, "call", c.ID, "err", err)
			problem = Preview("its answer could not be posted: "+cleanText(AsError(err).Msg), remoteError)
		}
	}
	return h.update(ctx, func(tx Tx) ([]*Event, error) {
		if err := tx.SetRemoteDelivery(ctx, c.AgentID, now, problem); err != nil {
			return nil, err
		}
		// The task it asks for input in is what the conversation's next
		// message to it continues; the one this message answered is done
		// waiting, whatever became of it.
		if a.Reply != nil && a.Reply.State == RemoteInputRequired && a.Reply.TaskID != "" {
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

// postRemote sends in as the remote agent, its brakes and all; a post
// already made (its client_msg_id taken) is not an error.
func (h *Hub) postRemote(ctx context.Context, agentID string, in SendInput) error {
	a, err := h.store.AgentByID(ctx, agentID)
	if err != nil {
		return AsError(err)
	}
	owner, err := h.store.UserByID(ctx, a.OwnerID)
	if err != nil {
		return AsError(err)
	}
	_, err = h.SendMessage(ctx, &Caller{Agent: a, Owner: owner}, in)
	if e := AsError(err); err != nil && e.Kind == KindConflict {
		return nil
	}
	return err
}

// remoteArtifactPosts are a completed task's artifacts as the remote's
// messages, one each, after its status's words: an artifact's text is
// the message; its data parts are in its metadata ("data", with the
// artifact's id and name) and, when it has no text, also its words, as
// JSON. Each post's client_msg_id is the call's and the artifact's place,
// so a crash posts none twice.
func remoteArtifactPosts(c *RemoteCall, arts []RemoteArtifact) []SendInput {
	var posts []SendInput
	for i, art := range arts {
		in := SendInput{ConversationID: c.ConversationID, Format: FormatText, ClientMsgID: fmt.Sprintf("%s.a%d", c.ID, i+1), remoteURL: c.CardURL,
			Body: art.Text}
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
		if len(b) > MaxMetadata {
			delete(meta, "data")
			meta["data_too_large"] = true
			b, _ = json.Marshal(meta)
		}
		in.Metadata = b
		if in.Body == "" {
			in.Body = "(an artifact without words or data)"
		}
		in.Body = Preview(in.Body, MaxBody)
		posts = append(posts, in)
	}
	return posts
}
