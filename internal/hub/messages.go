package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Message formats and kinds (§4). Kinds other than KindText are event posts:
// they report, and reach only the inboxes of those they mention.
const (
	FormatText     = "text"
	FormatMarkdown = "markdown"

	MessageText = "text"
)

// EventPostKinds are the message kinds that report rather than ask.
var EventPostKinds = []string{"tool_call", "tool_result", "thought", "error", "task"}

// Provenance values (§4).
const (
	AuthorAgent     = "agent"
	AuthorHuman     = "human"
	AuthorRemote    = "remote" // a remote A2A agent's answer (§18): words from outside
	AuthorityRemote = "remote"
	AuthorityAgent  = "agent"
	AuthorityHuman  = "human"
	AttestedByHub   = "server"
	MaxInstanceName = 40
)

var instanceRE = regexp.MustCompile(`^[a-z0-9_-]{2,40}$`)

// NormalizeInstance turns a session name into its stored form (§5): trimmed,
// lower-cased, spaces become dashes; then 2–40 of [a-z0-9_-]. "" stays "".
func NormalizeInstance(name, arg string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.ReplaceAll(n, " ", "-")
	if n == "" {
		return "", nil
	}
	if !instanceRE.MatchString(n) {
		return "", invalid("", "%s must be 2–40 of a-z, 0-9, _ and - (spaces become dashes), like \"palaver-main\"; got %q", arg, echo(name))
	}
	return n, nil
}

// Provenance is a message's server-attested provenance (§4), the same on
// every face: who wrote it, whether an AI did, on whose behalf (the verified
// owner), and with what authority.
type Provenance struct {
	Author     string       `json:"author"` // "human" or "agent"
	AI         bool         `json:"ai"`
	OnBehalfOf PrincipalRef `json:"on_behalf_of"`
	Authority  string       `json:"authority"` // human, human_interject, agent, owner_approved, owner_edited
	AttestedBy string       `json:"attested_by"`
	// Remote is the card URL of the remote A2A agent the words came from
	// (§18), for a message whose author is "remote".
	Remote string `json:"remote,omitempty"`
}

// PrincipalRef names a principal by id and handle.
type PrincipalRef struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
}

// Provenance attests the message (§4).
func (m *Message) Provenance() Provenance {
	return Provenance{Author: m.Author, AI: m.Author == AuthorAgent, OnBehalfOf: PrincipalRef{ID: m.OwnerID, Handle: m.OwnerHandle},
		Authority: m.Authority, AttestedBy: AttestedByHub, Remote: m.RemoteURL}
}

// Label is how pages name who stands behind a message (§4): "AI agent for
// @alice" for an agent's words, "@alice" for a person's.
func (p Provenance) Label() string {
	if p.Remote != "" {
		return "remote A2A agent at " + p.Remote + ", added by @" + p.OnBehalfOf.Handle
	}
	if p.AI {
		return "AI agent for @" + p.OnBehalfOf.Handle
	}
	return "@" + p.OnBehalfOf.Handle
}

// SummaryLine is how a listing shows the message in one line (§5): its
// summary, or a preview of its body cut on a character boundary.
func (m *Message) SummaryLine() string {
	if m.Summary != "" {
		return m.Summary
	}
	return Preview(m.Body, MaxSummary)
}

// SendInput is a send_message call (§4, §10.3).
type SendInput struct {
	ConversationID string
	Body           string
	Summary        string
	Format         string
	Kind           string
	Metadata       json.RawMessage
	Mentions       []string
	ReplyToSeq     int64
	NoReply        bool
	ToInstance     string
	Instance       string
	ClientMsgID    string

	a2aAgent  string // the message is an A2A request to this agent (§18)
	remoteURL string // the message is the answer of the remote A2A agent with this card (§18)
}

// SendResult is a stored message and how many participants it reached. A
// message held for review (Message.Status held) has reached nobody yet:
// Recipients is 0.
type SendResult struct {
	Message    *Message
	Recipients int
	// Duplicate: the client_msg_id was seen before and this is the message
	// stored then.
	Duplicate bool
	// Listening is how many of the recipients listen now (§19): a wait
	// of theirs is parked, so the message is seen at once.
	Listening int

	to []string // the recipients' ids, for Listening
}

// cleanObject checks that raw is one JSON object and re-encodes it, so the
// stored copy is valid UTF-8 (JSON decoding turns invalid bytes and unpaired
// surrogates into U+FFFD) and compact. Numbers keep their digits.
func cleanObject(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() {
		return nil, invalid("", "metadata must be a JSON object, like {\"exit_code\": 0}")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, AsError(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// checkBody cleans a message body and checks it is 1–MaxBody characters,
// not blank.
func checkBody(body string) (string, error) { return checkText("body", body, 1, MaxBody) }

// checkSend validates and cleans a send's arguments (§4 input hygiene).
// People are never asked for a summary.
func checkSend(in *SendInput, byPerson bool) error {
	var err error
	if in.Body, err = checkBody(in.Body); err != nil {
		return err
	}
	if in.Summary, err = checkLine("summary", strings.TrimSpace(in.Summary), MaxSummary); err != nil {
		return err
	}
	if !byPerson && in.Summary == "" && utf8.RuneCountInString(in.Body) > SummaryNeeded {
		return invalid("summary_required", "this {body} is %d characters; a {body} over %d characters needs a summary (at most %d characters) that says what you ask the reader for, not what you did — e.g. \"Please review the retry logic in store.go by Friday\"",
			utf8.RuneCountInString(in.Body), SummaryNeeded, MaxSummary)
	}
	switch in.Format {
	case "":
		in.Format = FormatText
	case FormatText, FormatMarkdown:
	default:
		return invalid("", "format must be \"text\" or \"markdown\" (got %q)", echo(in.Format))
	}
	switch {
	case in.Kind == "":
		in.Kind = MessageText
	case in.Kind != MessageText && !slices.Contains(EventPostKinds, in.Kind):
		return invalid("", "{kind} must be \"text\" or one of %s (got %q)", strings.Join(EventPostKinds, ", "), echo(in.Kind))
	}
	if len(in.Metadata) > 0 && !bytes.Equal(bytes.TrimSpace(in.Metadata), []byte("null")) {
		if len(in.Metadata) > MaxMetadata {
			return invalid("too_long", "metadata is %d bytes of JSON; the limit is %d bytes", len(in.Metadata), MaxMetadata)
		}
		if in.Metadata, err = cleanObject(in.Metadata); err != nil {
			return err
		}
	} else {
		in.Metadata = nil
	}
	if len(in.Mentions) > MaxMembers {
		return invalid("", "mentions has %d entries; the limit is %d", len(in.Mentions), MaxMembers)
	}
	if in.ReplyToSeq < 0 {
		return invalid("", "reply_to_seq must be a seq of this {conversation} (1 or more)")
	}
	if in.ToInstance, err = NormalizeInstance(in.ToInstance, "to_instance"); err != nil {
		return err
	}
	// A blank client_msg_id is refused, not taken for none: a retry with it
	// would otherwise store a second copy.
	if in.ClientMsgID != "" && blank(in.ClientMsgID) {
		return invalid("", "client_msg_id is blank: white space and invisible characters alone tell no send apart; give an id of your own, or leave it out")
	}
	if in.ClientMsgID, err = checkLine("client_msg_id", in.ClientMsgID, MaxClientMsgID); err != nil {
		return err
	}
	return nil
}

// SendMessage stores an agent's message in a conversation it takes part in
// and delivers it (§4, §5): a delivery and a message.new event for each
// other agent participant (event posts: only those mentioned), a
// message.new for the sender's own stream so sibling sessions hear it, and
// an event for each person taking part (agent.sent to the owner when none
// of those tells them). Refusals: the brakes (§7), closing (a close is
// pending), notice (reply_to_seq points at a no_reply message) — each told
// to the owner as brake.tripped — and listen (the agent's mode). Errors:
// not_found, no_recipients, conflict (the same client_msg_id with
// different words), invalid arguments. Each call's outcome is told to the
// hub's Observer.
func (h *Hub) SendMessage(ctx context.Context, c *Caller, in SendInput) (*SendResult, error) {
	res, err := h.sendMessage(ctx, c, in)
	h.observeSend(res, err)
	return res, err
}

func (h *Hub) sendMessage(ctx context.Context, c *Caller, in SendInput) (*SendResult, error) {
	if err := checkSend(&in, false); err != nil {
		return nil, err
	}
	if c.Agent.Mode == ModeListen {
		return nil, BrakeListen.deny("your owner set this agent to listen: it may read but not send")
	}
	var err error
	if in.Instance, err = h.seeInstance(ctx, c, in.Instance); err != nil {
		return nil, err
	}
	var res *SendResult
	err = retryDuplicate(func() error {
		return h.update(ctx, func(tx Tx) ([]*Event, error) {
			v, counted, err := lockedSendAccess(ctx, tx, in.ConversationID, h.sentQuery(c.Agent.ID, in.Body, h.now()))
			if err != nil {
				return nil, err
			}
			if in.ClientMsgID != "" {
				old, err := tx.MessageByClientID(ctx, c.Agent.ID, in.ClientMsgID)
				switch {
				case err == nil && old.ConversationID == v.Conversation.ID && old.Body == in.Body:
					res = &SendResult{Message: old, Duplicate: true}
					if old.Status == MessageSent {
						res.Recipients, res.to = recipients(v, old), recipientIDs(v, old)
					}
					return nil, nil
				case err == nil:
					return nil, &Error{Kind: KindConflict, Msg: "client_msg_id " + in.ClientMsgID + " was already used for a different message (" + old.ID + "); use a new client_msg_id for new words"}
				case !errors.Is(err, ErrNoRows):
					return nil, err
				}
			}
			if v.Conversation.Status == StatusCloseRequested {
				return tripped(BrakeClosing.deny("a close of this {conversation} is pending; you may read and acknowledge, but not send"), c, v.Conversation.ID, in.Instance, h.now())
			}
			held := c.Agent.Mode == ModeReview
			if v.Conversation.Kind == KindThread {
				// Being in the project is the whole grant (§8); its
				// access and review there apply.
				inReview, err := threadSend(ctx, tx, v.Conversation, c.Agent)
				if err != nil {
					return nil, err
				}
				held = held || inReview
			} else if err := stillReachable(ctx, tx, c.Agent, v); err != nil {
				return nil, err
			}
			n := countRecipients(v.Participants, c.Agent.ID)
			if n == 0 {
				return nil, invalid("no_recipients", "nobody else in this {conversation} can receive messages (every other participant is archived); nothing was sent")
			}
			mentions, err := checkMentions(v.Participants, in.Mentions)
			if err != nil {
				return nil, err
			}
			if mentions, err = roomMentions(v, c.Agent.ID, in.Kind, in.Body, mentions); err != nil {
				return nil, err
			}
			if in.ReplyToSeq > 0 {
				if in.ReplyToSeq > v.Conversation.LastSeq {
					return nil, invalid("", "reply_to_seq %d is not a message of this {conversation} (its last seq is %d)", in.ReplyToSeq, v.Conversation.LastSeq)
				}
				target, err := tx.MessageBySeq(ctx, v.Conversation.ID, in.ReplyToSeq)
				if err != nil {
					return nil, err
				}
				if target.NoReply {
					return tripped(BrakeNotice.deny("message %d was sent with no_reply: it is a notice, not a question, and takes no answer; acknowledge it instead", in.ReplyToSeq), c, v.Conversation.ID, in.Instance, h.now())
				}
			}
			now := h.now()
			if err := h.brake(ctx, tx, v.Conversation, c, in.Body, now, counted); err != nil {
				return tripped(err, c, v.Conversation.ID, in.Instance, now)
			}
			m := &Message{
				ID: NewID(IDMessage, now), ConversationID: v.Conversation.ID, Status: MessageSent,
				SenderID: c.Agent.ID, SenderKind: PrincipalAgent, SenderHandle: c.Agent.Handle(), SenderInstance: in.Instance,
				Body: in.Body, Summary: in.Summary, Format: in.Format, Kind: in.Kind, Metadata: in.Metadata,
				Mentions: mentions, ReplyToSeq: in.ReplyToSeq, NoReply: in.NoReply, ToInstance: in.ToInstance,
				ClientMsgID: in.ClientMsgID, Author: AuthorAgent, Authority: AuthorityAgent,
				OwnerID: c.Owner.ID, OwnerHandle: c.Owner.Handle, CreatedAt: now, RemoteURL: in.remoteURL,
			}
			if in.remoteURL != "" {
				m.Author, m.Authority = AuthorRemote, AuthorityRemote
			}
			if held {
				// Held for the owner (§7): it reaches nobody and takes no seq.
				m.Status = MessageHeld
				res = &SendResult{Message: m}
				// The sender and its owner, who decides, both hear it.
				pending := []*Event{
					{RecipientID: c.Agent.ID, Type: EventMessagePending, ConversationID: m.ConversationID, MessageID: m.ID, CreatedAt: now},
					{RecipientID: c.Agent.OwnerID, Type: EventMessagePending, ConversationID: m.ConversationID, MessageID: m.ID, CreatedAt: now},
				}
				if err := tx.InsertMessage(ctx, m); err != nil {
					return nil, err
				}
				return pending, noteA2A(ctx, tx, in.a2aAgent, m)
			}
			res = &SendResult{Message: m, Recipients: recipients(v, m), to: recipientIDs(v, m)}
			paused, err := h.countTurn(ctx, tx, v, c.Agent.ID, now)
			if err != nil {
				return nil, err
			}
			events, err := deliverNew(ctx, tx, v, m, now, paused)
			if err != nil {
				return nil, err
			}
			return events, noteA2A(ctx, tx, in.a2aAgent, m)
		})
	})
	if err != nil {
		return nil, err
	}
	res.Listening = h.listeningNow(ctx, res.to)
	return res, nil
}

// reaches reports whether message m of conversation v reaches participant
// p (§4, §10.5): event posts reach only those they mention; in a room, text
// is work only for the agents it mentions (its sender's own sessions still
// hear it); everything else reaches everyone not archived.
func reaches(v *ConversationView, m *Message, p *Participant) bool {
	mentioned := slices.Contains(m.Mentions, p.Handle)
	switch {
	case p.Archived:
		return false
	case m.Kind != MessageText:
		return mentioned
	case v.Conversation.ByMention && p.Kind == PrincipalAgent && p.PrincipalID != m.SenderID:
		return mentioned
	}
	return true
}

// recipients is how many a sent message is for, as its send reports: in a
// room those it mentions, elsewhere everyone else it reaches.
func recipients(v *ConversationView, m *Message) int { return len(recipientIDs(v, m)) }

// countRecipients counts the participants other than the sender that can
// receive: people, and agents that are not archived.
func countRecipients(ps []Participant, senderID string) int {
	n := 0
	for _, p := range ps {
		if p.PrincipalID != senderID && !p.Archived {
			n++
		}
	}
	return n
}

// checkMentions finds the participant each mention names — a handle, an
// id, or an agent's slug (findParticipant) — and returns their handles,
// each once.
func checkMentions(ps []Participant, mentions []string) ([]string, error) {
	var out []string
	for _, m := range mentions {
		p, err := findParticipant(ps, m)
		if err != nil {
			return nil, invalid("", "%s; add them with {add_participant} first", AsError(err).Msg)
		}
		if !slices.Contains(out, p.Handle) {
			out = append(out, p.Handle)
		}
	}
	return out, nil
}

// ReadInput is a read_messages call.
type ReadInput struct {
	ConversationID string
	AfterSeq       int64
	Limit          int   // 0: 100
	MarkRead       *bool // nil: true
	Instance       string
}

// ReadMessages returns messages after after_seq (§10.3). With mark_read
// (the default) it moves the caller's place (the named session's, with
// instance) to the last seq returned and records the fetch of each message
// delivered to the caller.
func (h *Hub) ReadMessages(ctx context.Context, c *Caller, in ReadInput) (*ReadResult, error) {
	limit, err := checkPage(in.AfterSeq, in.Limit)
	if err != nil {
		return nil, err
	}
	instance, err := h.seeInstance(ctx, c, in.Instance)
	if err != nil {
		return nil, err
	}
	v, err := access(ctx, h.store, c.Agent.ID, in.ConversationID)
	if err != nil {
		return nil, err
	}
	res, err := readPage(ctx, h.store, v.Conversation.ID, in.AfterSeq, limit)
	if err != nil {
		return nil, err
	}
	if len(res.Messages) > 0 && (in.MarkRead == nil || *in.MarkRead) {
		ids := make([]string, len(res.Messages))
		for i, m := range res.Messages {
			ids[i] = m.ID
		}
		err := h.store.Update(ctx, func(tx Tx) error {
			if err := tx.MoveRead(ctx, v.Conversation.ID, c.Agent.ID, instance, res.NextAfterSeq, true, h.now()); err != nil {
				return err
			}
			return tx.MarkFetched(ctx, c.Agent.ID, ids, h.now())
		})
		if err != nil {
			return nil, AsError(err)
		}
	}
	if res.Reads, err = h.store.Reads(ctx, v.Conversation.ID); err != nil {
		return nil, AsError(err)
	}
	return res, nil
}

var errNoMessageID = invalid("", "{message_id} is required: take it from {check_inbox} or {read_messages}")

// ReadMessage returns one message of a conversation the caller takes part in
// and records its fetch (§5: the first full read of the body).
func (h *Hub) ReadMessage(ctx context.Context, c *Caller, messageID, instance string) (*Message, error) {
	if _, err := h.seeInstance(ctx, c, instance); err != nil {
		return nil, err
	}
	if messageID == "" {
		return nil, errNoMessageID
	}
	m, err := h.store.Message(ctx, messageID)
	if errors.Is(err, ErrNoRows) {
		return nil, notFound("no message %q is visible to you; message ids come from {check_inbox} and {read_messages}", echo(messageID))
	}
	if err != nil {
		return nil, AsError(err)
	}
	if _, err := access(ctx, h.store, c.Agent.ID, m.ConversationID); err != nil || (m.Status != MessageSent && m.SenderID != c.Agent.ID) {
		return nil, notFound("no message %q is visible to you; message ids come from {check_inbox} and {read_messages}", echo(messageID))
	}
	err = h.store.Update(ctx, func(tx Tx) error { return tx.MarkFetched(ctx, c.Agent.ID, []string{m.ID}, h.now()) })
	if err != nil {
		return nil, AsError(err)
	}
	return m, nil
}

// Recent is a conversation's latest messages, at most limit (1–50, default
// 20), oldest first, and whether older ones come before them (§10.5
// read_thread, the threads resource). It marks nothing read.
func (h *Hub) Recent(ctx context.Context, c *Caller, conversationID string, limit int) (*ConversationView, *ReadResult, error) {
	limit, err := RecentPage.check(limit)
	if err != nil {
		return nil, nil, err
	}
	v, err := access(ctx, h.store, c.Agent.ID, conversationID)
	if err != nil {
		return nil, nil, err
	}
	res, err := recentPage(ctx, h.store, v.Conversation, limit)
	if err != nil {
		return nil, nil, err
	}
	return v, res, nil
}

// MessageReads are the queries of messages (Reader embeds them).
type MessageReads interface {
	Message(ctx context.Context, id string) (*Message, error)
	MessageBySeq(ctx context.Context, conversationID string, seq int64) (*Message, error)
	MessageByClientID(ctx context.Context, senderID, clientMsgID string) (*Message, error)
	// OriginalBodies returns, by message id, the agent's own words of each
	// message of ids that its owner edited before letting it go. No other
	// read fills Message.OriginalBody: only the hub's rule hands them over
	// (§7 review, originals).
	OriginalBodies(ctx context.Context, ids []string) (map[string]string, error)
	// Messages returns up to limit messages with seq > afterSeq, in seq order.
	Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*Message, error)
	// MessagesWhere is a page of a conversation's messages, by seq, from
	// offset: only of kind when kind is not "", only those created after
	// since when it is not zero; with how many there are in all.
	MessagesWhere(ctx context.Context, conversationID, kind string, since time.Time, offset, limit int) ([]*Message, int, error)
	// Unread counts messages past the principal's place (instance "") not
	// written by it.
	Unread(ctx context.Context, conversationID, principalID string) (int, error)
	Reads(ctx context.Context, conversationID string) ([]Read, error)
	// HeldMessages lists the messages held for the owner's review, oldest
	// first.
	HeldMessages(ctx context.Context, ownerID string) ([]*Message, error)
}

// MessageWrites are the writes of messages (Tx embeds them).
type MessageWrites interface {
	InsertMessage(ctx context.Context, m *Message) error
	// DecideMessage stores a held message's decision: its status, seq, body,
	// summary, original body, authority and who decided when.
	DecideMessage(ctx context.Context, m *Message) error
}
