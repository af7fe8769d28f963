package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Conversations and their participants (§4), with the brakes' counts
// kept on the conversation row (§7).

// convColumns lists a conversation's columns, each prefixed (a table
// alias and a dot, or ""), in scanConversation's order.
func convColumns(prefix string) string {
	cols := []string{"id", "kind", "title", "goal", "status", "COALESCE(" + prefix + "direct_key, '')",
		"COALESCE(" + prefix + "project_id, '')", "COALESCE(" + prefix + "item_id, '')", "COALESCE(" + prefix + "thread_key, '')",
		"creator_id", "created_at", "updated_at", "last_seq",
		"last_person_at", "agent_turns", "last_voice", "paused_at", "paused_reason", "by_mention"}
	for i, c := range cols {
		if !strings.HasPrefix(c, "COALESCE") {
			cols[i] = prefix + c
		}
	}
	return strings.Join(cols, ", ")
}

var convCols = convColumns("")

// conversationDest is where a row's conversation columns scan to; done
// finishes the times.
type conversationDest struct {
	c                                hub.Conversation
	created, updated, person, paused sql.NullInt64
}

func (d *conversationDest) dest() []any {
	c := &d.c
	return []any{&c.ID, &c.Kind, &c.Title, &c.Goal, &c.Status, &c.DirectKey, &c.ProjectID, &c.ItemID, &c.ThreadKey,
		&c.CreatorID, &d.created, &d.updated, &c.LastSeq,
		&d.person, &c.AgentTurns, &c.LastVoice, &d.paused, &c.PausedReason, &c.ByMention}
}

func (d *conversationDest) done() *hub.Conversation {
	d.c.CreatedAt, d.c.UpdatedAt, d.c.LastPersonAt, d.c.PausedAt = fromMS(d.created), fromMS(d.updated), fromMS(d.person), fromMS(d.paused)
	return &d.c
}

func scanConversation(row scanner) (*hub.Conversation, error) {
	var d conversationDest
	if err := row.Scan(d.dest()...); err != nil {
		return nil, err
	}
	return d.done(), nil
}

func (d queries) Conversation(ctx context.Context, id string) (*hub.Conversation, error) {
	c, err := scanConversation(d.q.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations WHERE id = ?`, id))
	return c, dbErr("conversation", err)
}

func (d queries) DirectConversation(ctx context.Context, key string) (*hub.Conversation, error) {
	c, err := scanConversation(d.q.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations WHERE direct_key = ? AND status <> 'closed'`, key))
	return c, dbErr("direct conversation", err)
}

func (d queries) ConversationsOf(ctx context.Context, principalID string, before time.Time, beforeID string, limit int) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "conversations of", scanConversation, `SELECT `+convCols+` FROM conversations WHERE status <> 'closed' AND id IN
		(SELECT conversation_id FROM participants WHERE principal_id = ? AND left_at IS NULL)
		AND (CAST(? AS BIGINT) IS NULL OR updated_at < ? OR (updated_at = ? AND id < ?))
		ORDER BY updated_at DESC, id DESC LIMIT ?`, principalID, ms(before), ms(before), ms(before), beforeID, limit)
}

func (d queries) OwnersConversations(ctx context.Context, ownerID string, before time.Time, beforeID string, limit int) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "owner's conversations", scanConversation, `SELECT `+convCols+` FROM conversations WHERE status <> 'closed'
		AND id IN (SELECT conversation_id FROM participants WHERE owner_id = ? AND left_at IS NULL)
		AND (CAST(? AS BIGINT) IS NULL OR updated_at < ? OR (updated_at = ? AND id < ?))
		ORDER BY updated_at DESC, id DESC LIMIT ?`, ownerID, ms(before), ms(before), ms(before), beforeID, limit)
}

func (d queries) LockConversation(ctx context.Context, id string) error {
	if d.dialect.lockConversation == "" {
		return nil
	}
	return d.exec(ctx, "lock conversation", d.dialect.lockConversation, id)
}

func (d queries) InsertConversation(ctx context.Context, c *hub.Conversation) error {
	return d.exec(ctx, "insert conversation", `INSERT INTO conversations (id, kind, title, goal, status, direct_key, project_id, item_id, thread_key,
		creator_id, created_at, updated_at, last_seq, by_mention) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Kind, c.Title, c.Goal, c.Status, nullString(c.DirectKey), nullString(c.ProjectID), nullString(c.ItemID), nullString(c.ThreadKey),
		c.CreatorID, ms(c.CreatedAt), ms(c.UpdatedAt), c.LastSeq, c.ByMention)
}

func (d queries) Threads(ctx context.Context, projectID string) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "threads", scanConversation, `SELECT `+convCols+` FROM conversations
		WHERE project_id = ? AND kind = 'thread' AND status <> 'closed' ORDER BY updated_at DESC, id DESC`, projectID)
}

func (d queries) ThreadByKey(ctx context.Context, projectID, key string) (*hub.Conversation, error) {
	c, err := scanConversation(d.q.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations
		WHERE project_id = ? AND thread_key = ? AND status <> 'closed'`, projectID, key))
	return c, dbErr("thread by key", err)
}

func (d queries) LeaveConversation(ctx context.Context, conversationID, principalID string, at time.Time) error {
	return d.exec(ctx, "leave conversation", `UPDATE participants SET left_at = ? WHERE conversation_id = ? AND principal_id = ? AND left_at IS NULL`,
		ms(at), conversationID, principalID)
}

func (d queries) SetConversationStatus(ctx context.Context, id, status string, at time.Time) error {
	return d.execOne(ctx, "set conversation status", `UPDATE conversations SET status = ?, updated_at = ? WHERE id = ?`, status, ms(at), id)
}

func (d queries) NextSeq(ctx context.Context, conversationID string, at time.Time) (int64, error) {
	var seq int64
	err := d.q.QueryRowContext(ctx, nextSeqSQL, ms(at), conversationID).Scan(&seq)
	return seq, dbErr("next seq", err)
}

// nextSeqSQL moves a conversation (its id the second argument) to its
// next seq at a time (the first), returning the seq.
const nextSeqSQL = `UPDATE conversations SET last_seq = last_seq + 1, updated_at = ? WHERE id = ? RETURNING last_seq`

// participantsFrom joins each current participant of conversation c to
// its handle: a person's own, an agent's owner/slug.
const participantsFrom = ` LEFT JOIN participants p ON p.conversation_id = c.id AND p.left_at IS NULL
		LEFT JOIN agents a ON p.kind = 'agent' AND a.id = p.principal_id
		LEFT JOIN users ou ON ou.id = a.owner_id
		LEFT JOIN users pu ON p.kind = 'user' AND pu.id = p.principal_id
		WHERE c.id = ?
		ORDER BY p.joined_at, p.principal_id <> c.creator_id, handle`

const participantCols = `p.principal_id, p.kind, p.owner_id, p.role, p.joined_at,
	CASE WHEN p.kind = 'agent' THEN ou.handle || '/' || a.slug ELSE pu.handle END AS handle, a.archived_at IS NOT NULL, a.public`

// participantDest is where a row's participant columns scan to; they are
// NULL on the one row of a conversation without participants.
type participantDest struct {
	id, kind, owner, role, handle sql.NullString
	joined                        sql.NullInt64
	archived, public              sql.NullBool
}

func (d *participantDest) dest() []any {
	return []any{&d.id, &d.kind, &d.owner, &d.role, &d.joined, &d.handle, &d.archived, &d.public}
}

func (d *participantDest) participant(conversationID string) (hub.Participant, bool) {
	return hub.Participant{ConversationID: conversationID, PrincipalID: d.id.String, Kind: d.kind.String, OwnerID: d.owner.String,
		Role: d.role.String, JoinedAt: fromMS(d.joined), Handle: d.handle.String, Archived: d.archived.Bool, Public: d.public.Bool}, d.id.Valid
}

// Participants lists the current participants. Order: by joining time,
// the creator first, then by handle.
func (d queries) Participants(ctx context.Context, conversationID string) ([]hub.Participant, error) {
	ps, err := queryAll(ctx, d.q, "participants", func(row scanner) (participantDest, error) {
		var p participantDest
		return p, row.Scan(p.dest()...)
	}, `SELECT `+participantCols+` FROM conversations c`+participantsFrom, conversationID)
	var out []hub.Participant
	for _, p := range ps {
		if v, ok := p.participant(conversationID); ok {
			out = append(out, v)
		}
	}
	return out, err
}

func (d queries) TakesPart(ctx context.Context, conversationID, principalID string) (bool, error) {
	var ok bool
	err := d.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM participants p JOIN conversations c ON c.id = p.conversation_id
		WHERE p.conversation_id = ? AND p.principal_id = ? AND p.left_at IS NULL AND c.status <> 'closed')`, conversationID, principalID).Scan(&ok)
	return ok, dbErr("takes part", err)
}

// ConversationView reads a conversation and its participants in one query.
func (d queries) ConversationView(ctx context.Context, id string) (*hub.ConversationView, error) {
	if d.views != nil {
		return d.views.view(ctx, d, id)
	}
	return d.conversationView(ctx, id)
}

// SendView implements hub.Tx: where the dialect folds no send (SQLite,
// whose writer keeps much of what it reads), ConversationView and
// CountSent in turn; otherwise one query.
func (d queries) SendView(ctx context.Context, id string, q hub.SentQuery) (*hub.ConversationView, hub.SentCounts, error) {
	var n hub.SentCounts
	if !d.dialect.foldSend {
		v, err := d.ConversationView(ctx, id)
		if err != nil {
			return nil, n, err
		}
		n.Same, n.Recent, err = d.CountSent(ctx, id, q.SenderID, q.Body, v.Conversation.LastPersonAt, q.RecentSince, q.Max)
		return v, n, err
	}
	// CountSent's, the duplicate brake's since the row's last person.
	counts := ` CROSS JOIN LATERAL (SELECT ` + sentCounts("c.id", "COALESCE(c.last_person_at, 0)") + `) k`
	v, err := d.conversationViewFrom(ctx, "send view", `SELECT `+convColumns("c.")+`, `+participantCols+`, k.same, k.recent FROM conversations c`+counts+participantsFrom,
		[]any{&n.Same, &n.Recent}, q.SenderID, bodyHash(q.Body), q.Body, q.Max, q.SenderID, since(q.RecentSince), q.Max, id)
	return v, n, err
}

// conversationView reads a conversation with its participants.
func (d queries) conversationView(ctx context.Context, id string) (*hub.ConversationView, error) {
	return d.conversationViewFrom(ctx, "conversation view", `SELECT `+convColumns("c.")+`, `+participantCols+` FROM conversations c`+participantsFrom, nil, id)
}

// conversationViewFrom runs query, which selects a conversation's columns
// and its participants' (one row each), then more columns scanned from
// the first row into more; the conversation's id is the last argument.
func (d queries) conversationViewFrom(ctx context.Context, op, query string, more []any, args ...any) (*hub.ConversationView, error) {
	id := args[len(args)-1].(string)
	rows, err := d.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	var v *hub.ConversationView
	for rows.Next() {
		var c conversationDest
		var p participantDest
		if err := rows.Scan(append(append(c.dest(), p.dest()...), more...)...); err != nil {
			return nil, dbErr(op, err)
		}
		if v == nil {
			v = &hub.ConversationView{Conversation: c.done()}
		}
		if part, ok := p.participant(id); ok {
			v.Participants = append(v.Participants, part)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr(op, err)
	}
	if v == nil {
		return nil, dbErr(op, sql.ErrNoRows)
	}
	return v, nil
}

func (d queries) AddParticipant(ctx context.Context, p *hub.Participant) error {
	return d.exec(ctx, "add participant", `INSERT INTO participants (conversation_id, principal_id, kind, owner_id, role, joined_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (conversation_id, principal_id) DO UPDATE SET left_at = NULL, role = excluded.role, joined_at = excluded.joined_at`,
		p.ConversationID, p.PrincipalID, p.Kind, p.OwnerID, p.Role, ms(p.JoinedAt))
}

func (d queries) SetBrakeState(ctx context.Context, c *hub.Conversation) error {
	return d.execOne(ctx, "set brake state", `UPDATE conversations SET agent_turns = ?, last_voice = ?, paused_at = ?, paused_reason = ? WHERE id = ?`,
		c.AgentTurns, c.LastVoice, ms(c.PausedAt), c.PausedReason, c.ID)
}

func (d queries) TouchPerson(ctx context.Context, conversationID string, at time.Time) error {
	return d.execOne(ctx, "touch person", `UPDATE conversations SET last_person_at = ?, agent_turns = 0, last_voice = '',
		paused_at = NULL, paused_reason = '' WHERE id = ?`, ms(at), conversationID)
}
