package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Messages (§4): stored, read by id, seq or client id, counted for the
// brakes (§7) and decided after review.

// msgFields are the messages table's columns, in scanTail's order.
var msgFields = []string{"id", "conversation_id", "seq", "status", "sender_id", "sender_kind", "sender_handle", "sender_instance",
	"body", "summary", "format", "kind", "metadata", "mentions", "reply_to_seq", "no_reply", "to_instance", "client_msg_id",
	"author", "authority", "owner_id", "owner_handle", "created_at", "original_body", "decided_by", "decided_at", "remote_url"}

// msgCols lists the message columns of table alias a for a SELECT.
func msgCols(a string) string {
	cols := make([]string, len(msgFields))
	for i, f := range msgFields {
		cols[i] = a + "." + f
		switch f {
		case "client_msg_id", "decided_by":
			cols[i] = "COALESCE(" + cols[i] + ", '')"
		case "original_body":
			// The agent's words before its owner's edit go only to that
			// owner, and only when the hub asks for them (OriginalBodies):
			// no read hands them over by the way (§7 review).
			cols[i] = "''"
		case "seq":
			cols[i] = "COALESCE(" + cols[i] + ", 0)"
		}
	}
	return strings.Join(cols, ", ")
}

// scanTail scans a message's columns that follow other columns in a row.
type scanTail struct {
	m                  hub.Message
	metadata, mentions sql.NullString
	created, decided   sql.NullInt64
}

func (s *scanTail) dest() []any {
	m := &s.m
	return []any{&m.ID, &m.ConversationID, &m.Seq, &m.Status, &m.SenderID, &m.SenderKind, &m.SenderHandle, &m.SenderInstance,
		&m.Body, &m.Summary, &m.Format, &m.Kind, &s.metadata, &s.mentions, &m.ReplyToSeq, &m.NoReply, &m.ToInstance,
		&m.ClientMsgID, &m.Author, &m.Authority, &m.OwnerID, &m.OwnerHandle, &s.created, &m.OriginalBody, &m.DecidedBy, &s.decided, &m.RemoteURL}
}

func (s *scanTail) message() *hub.Message {
	m := s.m
	if s.metadata.Valid {
		m.Metadata = json.RawMessage(s.metadata.String)
	}
	if s.mentions.Valid && s.mentions.String != "" {
		m.Mentions = strings.Split(s.mentions.String, " ")
	}
	m.CreatedAt, m.DecidedAt = fromMS(s.created), fromMS(s.decided)
	return &m
}

func scanMessage(row scanner) (*hub.Message, error) {
	var t scanTail
	if err := row.Scan(t.dest()...); err != nil {
		return nil, err
	}
	return t.message(), nil
}

func (d queries) Message(ctx context.Context, id string) (*hub.Message, error) {
	m, err := scanMessage(d.q.QueryRowContext(ctx, `SELECT `+msgCols("m")+` FROM messages m WHERE id = ?`, id))
	return m, dbErr("message", err)
}

func (d queries) MessageBySeq(ctx context.Context, conversationID string, seq int64) (*hub.Message, error) {
	m, err := scanMessage(d.q.QueryRowContext(ctx, `SELECT `+msgCols("m")+` FROM messages m WHERE conversation_id = ? AND seq = ?`, conversationID, seq))
	return m, dbErr("message by seq", err)
}

func (d queries) MessageByClientID(ctx context.Context, senderID, clientMsgID string) (*hub.Message, error) {
	m, err := scanMessage(d.q.QueryRowContext(ctx, `SELECT `+msgCols("m")+` FROM messages m WHERE sender_id = ? AND client_msg_id = ?`, senderID, clientMsgID))
	return m, dbErr("message by client id", err)
}

// OriginalBodies returns the agent's own words of each message of ids that
// its owner edited before letting it go, by message id.
func (d queries) OriginalBodies(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := d.q.QueryContext(ctx, `SELECT id, original_body FROM messages
		WHERE id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) AND original_body IS NOT NULL`, args...)
	if err != nil {
		return nil, dbErr("original bodies", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, dbErr("original bodies", err)
		}
		out[id] = body
	}
	return out, dbErr("original bodies", rows.Err())
}

func (d queries) Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*hub.Message, error) {
	return queryAll(ctx, d.q, "messages", scanMessage, `SELECT `+msgCols("m")+` FROM messages m WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?`, conversationID, afterSeq, limit)
}

// messagesByID loads messages by id, in one query.
func (d queries) messagesByID(ctx context.Context, ids []any) (map[string]*hub.Message, error) {
	rows, err := d.q.QueryContext(ctx, `SELECT `+msgCols("m")+` FROM messages m WHERE m.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, ids...)
	if err != nil {
		return nil, dbErr("messages by id", err)
	}
	defer rows.Close()
	out := make(map[string]*hub.Message, len(ids))
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, dbErr("messages by id", err)
		}
		out[m.ID] = m
	}
	return out, dbErr("messages by id", rows.Err())
}

// msgInsertCols are the columns an INSERT of a message writes, before the
// dialect's search column; msgInsertVals their values, every one an
// argument, and msgAppendVals the same with the seq AppendMessage's WITH
// takes (s.last_seq).
var (
	msgInsertCols = strings.Join(msgFields, ", ") + ", body_hash"
	msgSeqCol     = slices.Index(msgFields, "seq")
	msgInsertVals = insertVals("?")
	msgAppendVals = insertVals("s.last_seq")
)

// insertVals are the values of msgInsertCols, the seq's SQL seq.
func insertVals(seq string) string {
	v := slices.Repeat([]string{"?"}, len(msgFields)+1)
	v[msgSeqCol] = seq
	return strings.Join(v, ", ")
}

// messageRow is the columns of m's row, their values' SQL and its
// arguments, for an INSERT: with seqArg m.Seq is an argument (NULL when
// 0); without, the seq is AppendMessage's (msgAppendVals).
func messageRow(d *dialect, m *hub.Message, seqArg bool) (cols, vals string, args []any) {
	var metadata any
	if len(m.Metadata) > 0 {
		metadata = string(m.Metadata)
	}
	cols, vals = msgInsertCols, msgInsertVals
	args = []any{m.ID, m.ConversationID, nullSeq(m.Seq), m.Status, m.SenderID, m.SenderKind, m.SenderHandle, m.SenderInstance, m.Body, m.Summary, m.Format, m.Kind,
		metadata, nullString(strings.Join(m.Mentions, " ")), m.ReplyToSeq, m.NoReply, m.ToInstance, nullString(m.ClientMsgID),
		m.Author, m.Authority, m.OwnerID, m.OwnerHandle, ms(m.CreatedAt), nullString(m.OriginalBody), nullString(m.DecidedBy), ms(m.DecidedAt),
		m.RemoteURL, bodyHash(m.Body)}
	if !seqArg {
		vals, args = msgAppendVals, slices.Delete(args, msgSeqCol, msgSeqCol+1)
	}
	if col, val, words := d.search.indexed(m); col != "" {
		cols, vals, args = cols+", "+col, vals+", "+val, append(args, words...)
	}
	return cols, vals, args
}

func (d queries) InsertMessage(ctx context.Context, m *hub.Message) error {
	cols, vals, args := messageRow(d.dialect, m, true)
	if err := d.exec(ctx, "insert message", `INSERT INTO messages (`+cols+`) VALUES (`+vals+`)`, args...); err != nil {
		return err
	}
	d.noteSent(m)
	if d.views != nil {
		d.views.inserted(m.ConversationID, m.SenderID, m.Status, m.CreatedAt, bodyHash(m.Body))
	}
	return nil
}

// noteSent tells the SQLite writer that m, written sent, is for the search
// indexer (a savepoint rolled back makes it look for nothing).
func (d queries) noteSent(m *hub.Message) {
	if d.sent != nil && m.Status == hub.MessageSent {
		*d.sent = true
	}
}

// nullSeq stores a held message's seq (0) as NULL.
func nullSeq(seq int64) any {
	if seq == 0 {
		return nil
	}
	return seq
}

// bodyHash finds messages with the same words through an index.
func bodyHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:12])
}

// CountSent counts the sender's messages in a conversation that were sent
// or are held: same, those with exactly this body created after
// sameSince (all when zero), and recent, all created after recentSince,
// each stopping at max; from what the SQLite writer keeps where it can
// (sentcounts.go). SendView reads them so where it does not fold them
// into the conversation's read.
func (d queries) CountSent(ctx context.Context, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error) {
	if d.views != nil {
		return d.views.countSent(ctx, d, conversationID, senderID, body, sameSince, recentSince, max)
	}
	return d.countSent(ctx, conversationID, senderID, body, sameSince, recentSince, max)
}

// sentCounts counts a sender's messages in the conversation conv since
// the duplicate brake's window (from sameSince) with the same words
// (compared by their hash in messages_sender, then by the words), and
// since the budget brake's: the columns same and recent, each stopping
// at its limit. conv and sameSince are SQL, an argument's placeholder or
// a conversation row's column; the arguments are the sender, the hash
// and the words, the limit, then the sender, the budget's start and the
// limit, with conv's and sameSince's where they are placeholders.
func sentCounts(conv, sameSince string) string {
	return `(SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE sender_id = ? AND conversation_id = ` + conv + ` AND body_hash = ? AND created_at > ` + sameSince + `
		AND status <> 'rejected' AND body = ? LIMIT ?) AS same) AS same,
	(SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE sender_id = ? AND conversation_id = ` + conv + ` AND created_at > ?
		AND status <> 'rejected' LIMIT ?) AS recent) AS recent`
}

// countSentSQL is CountSent's query: sentCounts with every bound an
// argument.
var countSentSQL = `SELECT ` + sentCounts("?", "?")

// countSent is CountSent's query.
func (d queries) countSent(ctx context.Context, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error) {
	err = d.q.QueryRowContext(ctx, countSentSQL,
		senderID, conversationID, bodyHash(body), since(sameSince), body, max,
		senderID, conversationID, since(recentSince), max).Scan(&same, &recent)
	return same, recent, dbErr("count sent", err)
}

func (d queries) Voices(ctx context.Context, conversationID string, after time.Time) ([]string, error) {
	return queryAll(ctx, d.q, "voices", func(row scanner) (string, error) {
		var v string
		return v, row.Scan(&v)
	}, `SELECT sender_id || '/' || sender_instance FROM messages WHERE conversation_id = ? AND created_at > ?
		AND status = 'sent' AND sender_kind = 'agent' ORDER BY seq`, conversationID, since(after))
}

func (d queries) HeldMessages(ctx context.Context, ownerID string) ([]*hub.Message, error) {
	return queryAll(ctx, d.q, "held messages", scanMessage, `SELECT `+msgCols("m")+` FROM messages m
		WHERE m.owner_id = ? AND m.status = 'held' ORDER BY m.created_at, m.id`, ownerID)
}

func (d queries) DecideMessage(ctx context.Context, m *hub.Message) error {
	if d.views != nil {
		d.views.decided(m.ConversationID, m.SenderID)
	}
	set := ""
	args := []any{m.Status, nullSeq(m.Seq), m.Body, bodyHash(m.Body), m.Summary, nullString(m.OriginalBody), m.Authority, nullString(m.DecidedBy), ms(m.DecidedAt)}
	if col, val, words := d.dialect.search.indexed(m); col != "" {
		set, args = ", "+col+" = "+val, append(args, words...)
	}
	d.noteSent(m)
	return d.execOne(ctx, "decide message", `UPDATE messages SET status = ?, seq = ?, body = ?, body_hash = ?, summary = ?, original_body = ?,
		authority = ?, decided_by = ?, decided_at = ?`+set+` WHERE id = ? AND status = 'held'`, append(args, m.ID)...)
}

// AppendMessage implements hub.Tx: NewMessage's writes, in turn or, where
// a WITH may write, in one statement (one round trip of a send's
// transaction instead of five).
func (d queries) AppendMessage(ctx context.Context, n *hub.NewMessage) error {
	m := n.Message
	if d.dialect.foldSend {
		return d.appendWith(ctx, n)
	}
	var err error
	if m.Seq, err = d.NextSeq(ctx, m.ConversationID, n.At); err != nil {
		return err
	}
	if err := d.InsertMessage(ctx, m); err != nil {
		return err
	}
	if err := d.InsertDeliveries(ctx, m, n.Agents); err != nil {
		return err
	}
	if err := d.MoveRead(ctx, m.ConversationID, m.SenderID, m.SenderInstance, m.Seq, true, n.At); err != nil {
		return err
	}
	return d.InsertEvents(ctx, n.Events)
}

// appendWith is AppendMessage as one statement: the conversation's next
// seq, the message under it, its deliveries, its sender's place and the
// events, each a part of WITH reading what the part before returns (so
// none writes when the conversation is not there). It returns the seq and
// each event's id and transaction, as NextSeq and InsertEvents do.
func (d queries) appendWith(ctx context.Context, n *hub.NewMessage) error {
	m := n.Message
	cols, vals, args := messageRow(d.dialect, m, false)
	args = append([]any{ms(n.At), m.ConversationID}, args...)
	recipients, types, convs, msgIDs, data, created := make([]string, len(n.Events)), make([]string, len(n.Events)),
		make([]string, len(n.Events)), make([]string, len(n.Events)), make([]*string, len(n.Events)), make([]*int64, len(n.Events))
	for i, e := range n.Events {
		recipients[i], types[i], convs[i], msgIDs[i] = e.RecipientID, e.Type, e.ConversationID, e.MessageID
		if len(e.Data) > 0 {
			s := string(e.Data)
			data[i] = &s
		}
		if !e.CreatedAt.IsZero() {
			t := e.CreatedAt.UnixMilli()
			created[i] = &t
		}
	}
	args = append(args, m.ConversationID, n.Agents,
		m.ConversationID, m.SenderID, m.SenderInstance, ms(n.At),
		recipients, types, convs, msgIDs, data, created)
	rows, err := d.q.QueryContext(ctx, `WITH s AS (`+nextSeqSQL+`),
		m AS (INSERT INTO messages (`+cols+`) SELECT `+vals+` FROM s RETURNING id, seq),
		dl AS (INSERT INTO deliveries (message_id, agent_id, conversation_id)
			SELECT m.id, a.id, ? FROM m, unnest(CAST(? AS TEXT[])) WITH ORDINALITY AS a (id, n) ORDER BY a.n),
		r AS (INSERT INTO reads (conversation_id, principal_id, instance, last_read_seq, updated_at) SELECT ?, ?, ?, m.seq, ? FROM m`+readForward+`),
		e AS (INSERT INTO events (recipient_id, type, conversation_id, message_id, data, created_at)
			SELECT v.recipient_id, v.type, v.conversation_id, v.message_id, v.data, v.created_at
			FROM m, unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]))
				WITH ORDINALITY AS v (recipient_id, type, conversation_id, message_id, data, created_at, n)
			ORDER BY v.n RETURNING id, tx)
		SELECT s.last_seq, e.id, e.tx FROM s LEFT JOIN e ON TRUE ORDER BY e.id`, args...)
	if err != nil {
		return dbErr("append message", err)
	}
	defer rows.Close()
	var ids []int64
	var tx int64
	found := false
	for rows.Next() {
		var id, etx sql.NullInt64
		if err := rows.Scan(&m.Seq, &id, &etx); err != nil {
			return dbErr("append message", err)
		}
		found = true
		if id.Valid {
			ids, tx = append(ids, id.Int64), etx.Int64
		}
	}
	if err := rows.Err(); err != nil {
		return dbErr("append message", err)
	}
	if !found {
		return hub.ErrNoRows
	}
	if len(ids) != len(n.Events) {
		return fmt.Errorf("append message: %d ids for %d events", len(ids), len(n.Events))
	}
	for i, e := range n.Events {
		e.ID, e.Tx = ids[i], tx
	}
	return nil
}
