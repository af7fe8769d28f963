package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queries implements hub.Tx over a querier: on the read pool it serves
// hub.Reader; inside the writer's transaction, all of hub.Tx.
type queries struct {
	q       querier
	dialect *dialect
}

// stmtCache prepares each distinct query once per database handle, so the
// hot paths skip SQLite's parser (a third of a send's CPU without it).
// database/sql keeps one prepared statement per connection underneath. On
// the write handle a statement cannot be prepared while the writer's
// transaction holds the one connection, so a miss there runs unprepared
// once and is prepared after the commit (prepareMissed).
type stmtCache struct {
	db       *sql.DB
	dialect  *dialect
	deferred bool // the write handle: prepare misses later
	mu       sync.Mutex
	stmts    map[string]*sql.Stmt
	missed   map[string]bool
}

func newStmtCache(db *sql.DB, d *dialect, deferred bool) *stmtCache {
	return &stmtCache{db: db, dialect: d, deferred: deferred, stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}}
}

// get returns the query's statement, or nil when it is not prepared yet and
// preparation is deferred.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if !c.dialect.prepare {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if c.deferred {
		c.missed[query] = true
		return nil, nil
	}
	s, err := c.db.PrepareContext(ctx, c.dialect.rebind(query))
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// prepareMissed prepares the queries that ran unprepared; called by the
// writer while it holds no transaction.
func (c *stmtCache) prepareMissed(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q := range c.missed {
		if s, err := c.db.PrepareContext(ctx, c.dialect.rebind(q)); err == nil {
			c.stmts[q] = s
		}
		delete(c.missed, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stmts {
		s.Close()
	}
	c.stmts = nil
}

// prepared is a querier running queries as cached prepared statements, on
// the pool or, when tx is set, inside that transaction.
type prepared struct {
	cache *stmtCache
	tx    *sql.Tx
}

// plain is the querier for a query without a prepared statement.
func (p prepared) plain() querier {
	if p.tx != nil {
		return p.tx
	}
	return p.cache.db
}

func (p prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s, err := p.cache.get(ctx, query)
	if s == nil || p.tx == nil {
		return s, err
	}
	return p.tx.StmtContext(ctx, s), nil
}

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().ExecContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.ExecContext(ctx, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().QueryContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.QueryContext(ctx, args...)
}

func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := p.stmt(ctx, query)
	if s == nil || err != nil {
		return p.plain().QueryRowContext(ctx, p.cache.dialect.rebind(query), args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// ms turns a time into Unix milliseconds, the zero time into NULL.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMS turns stored Unix milliseconds back into a UTC time.
func fromMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (d queries) exec(ctx context.Context, op, query string, args ...any) error {
	_, err := d.q.ExecContext(ctx, query, args...)
	return dbErr(op, err)
}

// execOne runs a statement that must change exactly one row.
func (d queries) execOne(ctx context.Context, op, query string, args ...any) error {
	res, err := d.q.ExecContext(ctx, query, args...)
	if err != nil {
		return dbErr(op, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbErr(op, err)
	} else if n == 0 {
		return hub.ErrNoRows
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q querier, op string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, dbErr(op, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, dbErr(op, err)
		}
		out = append(out, v)
	}
	return out, dbErr(op, rows.Err())
}

// ---- meta

func (d queries) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := d.q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return v, dbErr("meta", err)
}

func (d queries) SetMeta(ctx context.Context, key, value string) error {
	return d.exec(ctx, "set meta", `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
}

// ---- users and agents

func scanUser(row scanner) (*hub.User, error) {
	var u hub.User
	var created sql.NullInt64
	if err := row.Scan(&u.ID, &u.Handle, &u.Name, &created); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMS(created)
	return &u, nil
}

const userCols = `id, handle, name, created_at`

func (d queries) UserByID(ctx context.Context, id string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
	return u, dbErr("user", err)
}

func (d queries) UserByHandle(ctx context.Context, handle string) (*hub.User, error) {
	u, err := scanUser(d.q.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE handle = ?`, handle))
	return u, dbErr("user by handle", err)
}

func (d queries) InsertUser(ctx context.Context, u *hub.User) error {
	return d.exec(ctx, "insert user", `INSERT INTO users (id, handle, name, created_at) VALUES (?, ?, ?, ?)`,
		u.ID, u.Handle, u.Name, ms(u.CreatedAt))
}

const agentCols = `a.id, a.owner_id, u.handle, a.slug, a.description, a.goal, a.mode, a.archived_at, a.created_at`
const agentFrom = ` FROM agents a JOIN users u ON u.id = a.owner_id`

func scanAgent(row scanner) (*hub.Agent, error) {
	var a hub.Agent
	var archived, created sql.NullInt64
	if err := row.Scan(&a.ID, &a.OwnerID, &a.OwnerHandle, &a.Slug, &a.Description, &a.Goal, &a.Mode, &archived, &created); err != nil {
		return nil, err
	}
	a.ArchivedAt, a.CreatedAt = fromMS(archived), fromMS(created)
	return &a, nil
}

func (d queries) AgentByID(ctx context.Context, id string) (*hub.Agent, error) {
	a, err := scanAgent(d.q.QueryRowContext(ctx, `SELECT `+agentCols+agentFrom+` WHERE a.id = ?`, id))
	return a, dbErr("agent", err)
}

func (d queries) AgentByHandle(ctx context.Context, owner, slug string) (*hub.Agent, error) {
	a, err := scanAgent(d.q.QueryRowContext(ctx, `SELECT `+agentCols+agentFrom+` WHERE u.handle = ? AND a.slug = ?`, owner, slug))
	return a, dbErr("agent by handle", err)
}

func (d queries) Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*hub.Agent, error) {
	return queryAll(ctx, d.q, "agents", scanAgent, `SELECT `+agentCols+agentFrom+` WHERE (? = '' OR a.owner_id = ?) AND (? OR a.archived_at IS NULL) ORDER BY u.handle, a.created_at, a.id`, ownerID, ownerID, includeArchived)
}

func (d queries) InsertAgent(ctx context.Context, a *hub.Agent) error {
	return d.exec(ctx, "insert agent", `INSERT INTO agents (id, owner_id, slug, description, goal, mode, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.OwnerID, a.Slug, a.Description, a.Goal, a.Mode, ms(a.CreatedAt))
}

func (d queries) SetAgentArchived(ctx context.Context, agentID string, at time.Time) error {
	return d.execOne(ctx, "archive agent", `UPDATE agents SET archived_at = ? WHERE id = ?`, ms(at), agentID)
}

func (d queries) Instances(ctx context.Context, agentID string) ([]hub.Instance, error) {
	return queryAll(ctx, d.q, "instances", func(row scanner) (hub.Instance, error) {
		var i hub.Instance
		var seen sql.NullInt64
		err := row.Scan(&i.Name, &i.Note, &seen)
		i.LastSeen = fromMS(seen)
		return i, err
	}, `SELECT name, note, last_seen_at FROM instances WHERE agent_id = ? ORDER BY last_seen_at DESC, name`, agentID)
}

func (d queries) UpsertInstance(ctx context.Context, agentID, name, note string, at time.Time) error {
	return d.exec(ctx, "upsert instance", `INSERT INTO instances (agent_id, name, note, last_seen_at, first_seen_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, name) DO UPDATE SET last_seen_at = excluded.last_seen_at,
		note = CASE WHEN excluded.note = '' THEN instances.note ELSE excluded.note END`, agentID, name, note, ms(at), ms(at))
}

func (d queries) DeleteInstance(ctx context.Context, agentID, name string) error {
	return d.exec(ctx, "delete instance", `DELETE FROM instances WHERE agent_id = ? AND name = ?`, agentID, name)
}

// ---- tokens

const tokenCols = `id, hash, user_id, COALESCE(agent_id, ''), name, scopes, created_at, expires_at, last_used_at, revoked_at`

// tokenDest is where a row's token columns (tokenCols) scan to; done
// finishes the scopes and times.
type tokenDest struct {
	t                               hub.Token
	scopes                          string
	created, expires, used, revoked sql.NullInt64
}

func (d *tokenDest) dest() []any {
	t := &d.t
	return []any{&t.ID, &t.Hash, &t.UserID, &t.AgentID, &t.Name, &d.scopes, &d.created, &d.expires, &d.used, &d.revoked}
}

func (d *tokenDest) done() *hub.Token {
	if d.scopes != "" {
		d.t.Scopes = strings.Split(d.scopes, " ")
	}
	d.t.CreatedAt, d.t.ExpiresAt, d.t.LastUsedAt, d.t.RevokedAt = fromMS(d.created), fromMS(d.expires), fromMS(d.used), fromMS(d.revoked)
	return &d.t
}

func scanToken(row scanner) (*hub.Token, error) {
	var d tokenDest
	if err := row.Scan(d.dest()...); err != nil {
		return nil, err
	}
	return d.done(), nil
}

func (d queries) TokenByHash(ctx context.Context, hash []byte) (*hub.Token, *hub.Agent, *hub.User, error) {
	var (
		t                                      tokenDest
		aID, aSlug, aDescription, aGoal, aMode sql.NullString
		aArchived, aCreated                    sql.NullInt64
		u                                      hub.User
		uCreated                               sql.NullInt64
	)
	err := d.q.QueryRowContext(ctx, `SELECT t.id, t.hash, t.user_id, COALESCE(t.agent_id, ''), t.name, t.scopes, t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
			a.id, a.slug, a.description, a.goal, a.mode, a.archived_at, a.created_at, u.id, u.handle, u.name, u.created_at
		FROM tokens t JOIN users u ON u.id = t.user_id LEFT JOIN agents a ON a.id = t.agent_id
		WHERE t.hash = ?`, hash).Scan(append(t.dest(), &aID, &aSlug, &aDescription, &aGoal, &aMode, &aArchived, &aCreated, &u.ID, &u.Handle, &u.Name, &uCreated)...)
	if err != nil {
		return nil, nil, nil, dbErr("token by hash", err)
	}
	u.CreatedAt = fromMS(uCreated)
	var a *hub.Agent
	if aID.Valid {
		a = &hub.Agent{ID: aID.String, OwnerID: u.ID, OwnerHandle: u.Handle, Slug: aSlug.String, Description: aDescription.String,
			Goal: aGoal.String, Mode: aMode.String, ArchivedAt: fromMS(aArchived), CreatedAt: fromMS(aCreated)}
	}
	return t.done(), a, &u, nil
}

func (d queries) TokenByID(ctx context.Context, id string) (*hub.Token, error) {
	t, err := scanToken(d.q.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE id = ?`, id))
	return t, dbErr("token", err)
}

func (d queries) Tokens(ctx context.Context, userID, agentID string) ([]*hub.Token, error) {
	return queryAll(ctx, d.q, "tokens", scanToken, `SELECT `+tokenCols+` FROM tokens WHERE user_id = ? AND (? = '' OR agent_id = ?) ORDER BY created_at, id`, userID, agentID, agentID)
}

func (d queries) InsertToken(ctx context.Context, t *hub.Token) error {
	return d.exec(ctx, "insert token", `INSERT INTO tokens (id, hash, user_id, agent_id, name, scopes, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Hash, t.UserID, nullString(t.AgentID), t.Name, strings.Join(t.Scopes, " "), ms(t.CreatedAt), ms(t.ExpiresAt))
}

func (d queries) RevokeToken(ctx context.Context, id string, at time.Time) error {
	return d.execOne(ctx, "revoke token", `UPDATE tokens SET revoked_at = ? WHERE id = ?`, ms(at), id)
}

func (d queries) TouchToken(ctx context.Context, id string, at time.Time) error {
	return d.exec(ctx, "touch token", `UPDATE tokens SET last_used_at = ? WHERE id = ?`, ms(at), id)
}

// ---- conversations

// convColumns lists a conversation's columns, each prefixed (a table
// alias and a dot, or ""), in scanConversation's order.
func convColumns(prefix string) string {
	cols := []string{"id", "kind", "title", "goal", "status", "COALESCE(" + prefix + "direct_key, '')", "creator_id", "created_at", "updated_at", "last_seq",
		"last_person_at", "agent_turns", "last_voice", "paused_at", "paused_reason"}
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
	return []any{&c.ID, &c.Kind, &c.Title, &c.Goal, &c.Status, &c.DirectKey, &c.CreatorID, &d.created, &d.updated, &c.LastSeq,
		&d.person, &c.AgentTurns, &c.LastVoice, &d.paused, &c.PausedReason}
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

func (d queries) ConversationsOf(ctx context.Context, principalID string, limit int) ([]*hub.Conversation, error) {
	return queryAll(ctx, d.q, "conversations of", scanConversation, `SELECT `+convCols+` FROM conversations WHERE status <> 'closed' AND id IN
		(SELECT conversation_id FROM participants WHERE principal_id = ? AND left_at IS NULL)
		ORDER BY updated_at DESC, id DESC LIMIT ?`, principalID, limit)
}

func (d queries) LockConversation(ctx context.Context, id string) error {
	if d.dialect.lockConversation == "" {
		return nil
	}
	return d.exec(ctx, "lock conversation", d.dialect.lockConversation, id)
}

func (d queries) InsertConversation(ctx context.Context, c *hub.Conversation) error {
	return d.exec(ctx, "insert conversation", `INSERT INTO conversations (id, kind, title, goal, status, direct_key, creator_id, created_at, updated_at, last_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Kind, c.Title, c.Goal, c.Status, nullString(c.DirectKey), c.CreatorID, ms(c.CreatedAt), ms(c.UpdatedAt), c.LastSeq)
}

func (d queries) SetConversationStatus(ctx context.Context, id, status string, at time.Time) error {
	return d.execOne(ctx, "set conversation status", `UPDATE conversations SET status = ?, updated_at = ? WHERE id = ?`, status, ms(at), id)
}

func (d queries) NextSeq(ctx context.Context, conversationID string, at time.Time) (int64, error) {
	var seq int64
	err := d.q.QueryRowContext(ctx, `UPDATE conversations SET last_seq = last_seq + 1, updated_at = ? WHERE id = ? RETURNING last_seq`, ms(at), conversationID).Scan(&seq)
	return seq, dbErr("next seq", err)
}

// participantsFrom joins each current participant of conversation c to
// its handle: a person's own, an agent's owner/slug.
const participantsFrom = ` LEFT JOIN participants p ON p.conversation_id = c.id AND p.left_at IS NULL
		LEFT JOIN agents a ON p.kind = 'agent' AND a.id = p.principal_id
		LEFT JOIN users ou ON ou.id = a.owner_id
		LEFT JOIN users pu ON p.kind = 'user' AND pu.id = p.principal_id
		WHERE c.id = ?
		ORDER BY p.joined_at, p.principal_id <> c.creator_id, handle`

const participantCols = `p.principal_id, p.kind, p.owner_id, p.role, p.joined_at,
	CASE WHEN p.kind = 'agent' THEN ou.handle || '/' || a.slug ELSE pu.handle END AS handle, a.archived_at IS NOT NULL`

// participantDest is where a row's participant columns scan to; they are
// NULL on the one row of a conversation without participants.
type participantDest struct {
	id, kind, owner, role, handle sql.NullString
	joined                        sql.NullInt64
	archived                      sql.NullBool
}

func (d *participantDest) dest() []any {
	return []any{&d.id, &d.kind, &d.owner, &d.role, &d.joined, &d.handle, &d.archived}
}

func (d *participantDest) participant(conversationID string) (hub.Participant, bool) {
	return hub.Participant{ConversationID: conversationID, PrincipalID: d.id.String, Kind: d.kind.String, OwnerID: d.owner.String,
		Role: d.role.String, JoinedAt: fromMS(d.joined), Handle: d.handle.String, Archived: d.archived.Bool}, d.id.Valid
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
	rows, err := d.q.QueryContext(ctx, `SELECT `+convColumns("c.")+`, `+participantCols+` FROM conversations c`+participantsFrom, id)
	if err != nil {
		return nil, dbErr("conversation view", err)
	}
	defer rows.Close()
	var v *hub.ConversationView
	for rows.Next() {
		var c conversationDest
		var p participantDest
		if err := rows.Scan(append(c.dest(), p.dest()...)...); err != nil {
			return nil, dbErr("conversation view", err)
		}
		if v == nil {
			v = &hub.ConversationView{Conversation: c.done()}
		}
		if part, ok := p.participant(id); ok {
			v.Participants = append(v.Participants, part)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("conversation view", err)
	}
	if v == nil {
		return nil, dbErr("conversation view", sql.ErrNoRows)
	}
	return v, nil
}

func (d queries) AddParticipant(ctx context.Context, p *hub.Participant) error {
	return d.exec(ctx, "add participant", `INSERT INTO participants (conversation_id, principal_id, kind, owner_id, role, joined_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (conversation_id, principal_id) DO UPDATE SET left_at = NULL, role = excluded.role, joined_at = excluded.joined_at`,
		p.ConversationID, p.PrincipalID, p.Kind, p.OwnerID, p.Role, ms(p.JoinedAt))
}

// ---- messages

// msgFields are the messages table's columns, in scanTail's order.
var msgFields = []string{"id", "conversation_id", "seq", "status", "sender_id", "sender_kind", "sender_handle", "sender_instance",
	"body", "summary", "format", "kind", "metadata", "mentions", "reply_to_seq", "no_reply", "to_instance", "client_msg_id",
	"author", "authority", "owner_id", "owner_handle", "created_at", "original_body", "decided_by", "decided_at"}

// msgCols lists the message columns of table alias a for a SELECT.
func msgCols(a string) string {
	cols := make([]string, len(msgFields))
	for i, f := range msgFields {
		cols[i] = a + "." + f
		switch f {
		case "client_msg_id", "original_body", "decided_by":
			cols[i] = "COALESCE(" + cols[i] + ", '')"
		case "seq":
			cols[i] = "COALESCE(" + cols[i] + ", 0)"
		}
	}
	return strings.Join(cols, ", ")
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

func (d queries) Messages(ctx context.Context, conversationID string, afterSeq int64, limit int) ([]*hub.Message, error) {
	return queryAll(ctx, d.q, "messages", scanMessage, `SELECT `+msgCols("m")+` FROM messages m WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?`, conversationID, afterSeq, limit)
}

func (d queries) InsertMessage(ctx context.Context, m *hub.Message) error {
	var metadata any
	if len(m.Metadata) > 0 {
		metadata = string(m.Metadata)
	}
	return d.exec(ctx, "insert message", `INSERT INTO messages (`+strings.Join(msgFields, ", ")+`, body_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.ConversationID, nullSeq(m.Seq), m.Status, m.SenderID, m.SenderKind, m.SenderHandle, m.SenderInstance, m.Body, m.Summary, m.Format, m.Kind,
		metadata, nullString(strings.Join(m.Mentions, " ")), m.ReplyToSeq, m.NoReply, m.ToInstance, nullString(m.ClientMsgID),
		m.Author, m.Authority, m.OwnerID, m.OwnerHandle, ms(m.CreatedAt), nullString(m.OriginalBody), nullString(m.DecidedBy), ms(m.DecidedAt),
		bodyHash(m.Body))
}

// nullSeq stores a held message's seq (0) as NULL.
func nullSeq(seq int64) any {
	if seq == 0 {
		return nil
	}
	return seq
}

func (d queries) Unread(ctx context.Context, conversationID, principalID string) (int, error) {
	var n int
	err := d.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE conversation_id = ? AND sender_id <> ? AND seq >
		COALESCE((SELECT last_read_seq FROM reads WHERE conversation_id = ? AND principal_id = ? AND instance = ''), 0)`,
		conversationID, principalID, conversationID, principalID).Scan(&n)
	return n, dbErr("unread", err)
}

func (d queries) Reads(ctx context.Context, conversationID string) ([]hub.Read, error) {
	return queryAll(ctx, d.q, "reads", func(row scanner) (hub.Read, error) {
		var r hub.Read
		var updated sql.NullInt64
		err := row.Scan(&r.PrincipalID, &r.Handle, &r.Instance, &r.LastReadSeq, &updated)
		r.UpdatedAt = fromMS(updated)
		return r, err
	}, `SELECT r.principal_id, CASE WHEN a.id IS NOT NULL THEN ou.handle || '/' || a.slug ELSE COALESCE(pu.handle, '') END,
			r.instance, r.last_read_seq, r.updated_at
		FROM reads r
		LEFT JOIN agents a ON a.id = r.principal_id
		LEFT JOIN users ou ON ou.id = a.owner_id
		LEFT JOIN users pu ON pu.id = r.principal_id
		WHERE r.conversation_id = ? ORDER BY 2, r.instance`, conversationID)
}

func (d queries) MoveRead(ctx context.Context, conversationID, principalID, instance string, seq int64, forward bool, at time.Time) error {
	if !forward {
		return d.exec(ctx, "move read back", `UPDATE reads SET last_read_seq = ?, updated_at = ?
			WHERE conversation_id = ? AND principal_id = ? AND instance = ? AND last_read_seq > ?`,
			seq, ms(at), conversationID, principalID, instance, seq)
	}
	return d.exec(ctx, "move read", `INSERT INTO reads (conversation_id, principal_id, instance, last_read_seq, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (conversation_id, principal_id, instance) DO UPDATE SET last_read_seq = excluded.last_read_seq, updated_at = excluded.updated_at
		WHERE excluded.last_read_seq > reads.last_read_seq`, conversationID, principalID, instance, seq, ms(at))
}

// ---- deliveries

const deliveryCols = `d.message_id, d.agent_id, d.state, d.attempts, d.error, d.fetched_at, d.acked_at`

func scanDelivery(dst *hub.Delivery, fetched, acked *sql.NullInt64) []any {
	return []any{&dst.MessageID, &dst.AgentID, &dst.State, &dst.Attempts, &dst.Error, fetched, acked}
}

func (d queries) Delivery(ctx context.Context, agentID, messageID string) (*hub.Delivery, error) {
	var dl hub.Delivery
	var fetched, acked sql.NullInt64
	err := d.q.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries d WHERE d.agent_id = ? AND d.message_id = ?`, agentID, messageID).
		Scan(scanDelivery(&dl, &fetched, &acked)...)
	if err != nil {
		return nil, dbErr("delivery", err)
	}
	dl.FetchedAt, dl.AckedAt = fromMS(fetched), fromMS(acked)
	return &dl, nil
}

func (d queries) Inbox(ctx context.Context, agentID string, f hub.SessionFilter, limit int) ([]hub.InboxItem, int, error) {
	// Each waiting delivery looks up its conversation: the cost follows the
	// inbox, not how many conversations there are. Without a session the
	// count needs neither the message nor its hold.
	waiting := ` FROM deliveries d JOIN conversations c ON c.id = d.conversation_id AND c.status <> 'closed'`
	where := ` WHERE d.agent_id = ? AND d.acked_at IS NULL`
	from := waiting + ` JOIN messages m ON m.id = d.message_id
		LEFT JOIN holds h ON h.agent_id = d.agent_id AND h.conversation_id = d.conversation_id
		LEFT JOIN instances hi ON hi.agent_id = h.agent_id AND hi.name = h.instance` + where
	count := waiting + where
	args := []any{agentID}
	if f.Instance != "" {
		from += ` AND (m.to_instance = ? OR (m.to_instance = '' AND
			(h.instance IS NULL OR h.instance = ? OR hi.last_seen_at IS NULL OR hi.last_seen_at <= ?)))`
		count = from
		args = append(args, f.Instance, f.Instance, ms(f.LiveSince))
	}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+count, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("inbox count", err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	heldBy := `CASE WHEN hi.last_seen_at > ? THEN h.instance ELSE '' END`
	items, err := queryAll(ctx, d.q, "inbox", func(row scanner) (hub.InboxItem, error) {
		var it hub.InboxItem
		var fetched, acked sql.NullInt64
		var msg scanTail
		err := row.Scan(append(append(scanDelivery(&it.Delivery, &fetched, &acked), &it.HeldBy), msg.dest()...)...)
		it.Delivery.FetchedAt, it.Delivery.AckedAt = fromMS(fetched), fromMS(acked)
		it.Message = msg.message()
		return it, err
	}, `SELECT `+deliveryCols+", "+heldBy+", "+msgCols("m")+from+` ORDER BY d.id LIMIT ?`,
		append(append([]any{ms(f.LiveSince)}, args...), limit)...)
	return items, total, err
}

func (d queries) SiblingWords(ctx context.Context, agentID, instance string, limit int) ([]*hub.Message, int, error) {
	from := ` FROM messages m
		JOIN conversations c ON c.id = m.conversation_id
		JOIN participants p ON p.conversation_id = m.conversation_id AND p.principal_id = m.sender_id AND p.left_at IS NULL
		JOIN instances i ON i.agent_id = m.sender_id AND i.name = ?
		LEFT JOIN reads r ON r.conversation_id = m.conversation_id AND r.principal_id = m.sender_id AND r.instance = i.name
		WHERE m.sender_id = ? AND m.sender_instance <> i.name AND m.sender_instance <> '' AND m.created_at >= i.first_seen_at
			AND c.kind <> 'direct' AND c.status <> 'closed'
			AND m.seq > COALESCE(r.last_read_seq, 0) AND (m.to_instance = '' OR m.to_instance = i.name)`
	args := []any{instance, agentID}
	var total int
	if err := d.q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, dbErr("sibling words count", err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	msgs, err := queryAll(ctx, d.q, "sibling words", scanMessage, `SELECT `+msgCols("m")+from+` ORDER BY m.created_at, m.id LIMIT ?`, append(args, limit)...)
	return msgs, total, err
}

func (d queries) Holds(ctx context.Context, agentID string) ([]hub.Hold, error) {
	return queryAll(ctx, d.q, "holds", func(row scanner) (hub.Hold, error) {
		var h hub.Hold
		var since, seen sql.NullInt64
		err := row.Scan(&h.ConversationID, &h.Instance, &since, &seen)
		h.Since, h.LastSeen = fromMS(since), fromMS(seen)
		return h, err
	}, `SELECT h.conversation_id, h.instance, h.since, i.last_seen_at FROM holds h
		LEFT JOIN instances i ON i.agent_id = h.agent_id AND i.name = h.instance
		WHERE h.agent_id = ?`, agentID)
}

// since is a time as stored, 0 for the zero time ("from the beginning").
func since(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// bodyHash finds messages with the same words through an index.
func bodyHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:12])
}

func (d queries) CountSent(ctx context.Context, conversationID, senderID, body string, sameSince, recentSince time.Time, max int) (same, recent int, err error) {
	err = d.q.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE sender_id = ? AND conversation_id = ? AND body_hash = ? AND created_at > ?
			AND status <> 'rejected' AND body = ? LIMIT ?) AS same),
		(SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE sender_id = ? AND conversation_id = ? AND created_at > ?
			AND status <> 'rejected' LIMIT ?) AS recent)`,
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

const questionCols = `q.id, q.agent_id, u.handle || '/' || a.slug, q.owner_id, q.instance, q.conversation_id, q.question,
	COALESCE(q.options, ''), COALESCE(q.answer, ''), q.answered_at, q.acked_at, q.created_at`
const questionFrom = ` FROM questions q JOIN agents a ON a.id = q.agent_id JOIN users u ON u.id = a.owner_id`

func scanQuestion(row scanner) (*hub.Question, error) {
	var q hub.Question
	var options string
	var answered, acked, created sql.NullInt64
	if err := row.Scan(&q.ID, &q.AgentID, &q.AgentHandle, &q.OwnerID, &q.Instance, &q.ConversationID, &q.Question,
		&options, &q.Answer, &answered, &acked, &created); err != nil {
		return nil, err
	}
	if options != "" {
		if err := json.Unmarshal([]byte(options), &q.Options); err != nil {
			return nil, err
		}
	}
	q.AnsweredAt, q.AckedAt, q.CreatedAt = fromMS(answered), fromMS(acked), fromMS(created)
	return &q, nil
}

func (d queries) Question(ctx context.Context, id string) (*hub.Question, error) {
	q, err := scanQuestion(d.q.QueryRowContext(ctx, `SELECT `+questionCols+questionFrom+` WHERE q.id = ?`, id))
	return q, dbErr("question", err)
}

func (d queries) PendingQuestions(ctx context.Context, ownerID string) ([]*hub.Question, error) {
	return queryAll(ctx, d.q, "pending questions", scanQuestion, `SELECT `+questionCols+questionFrom+`
		WHERE q.owner_id = ? AND q.answered_at IS NULL ORDER BY q.created_at, q.id`, ownerID)
}

func (d queries) Answers(ctx context.Context, agentID, instance string) ([]*hub.Question, error) {
	return queryAll(ctx, d.q, "answers", scanQuestion, `SELECT `+questionCols+questionFrom+`
		WHERE q.agent_id = ? AND q.answered_at IS NOT NULL AND q.acked_at IS NULL AND (? = '' OR q.instance = ?)
		ORDER BY q.answered_at, q.id`, agentID, instance, instance)
}

func (d queries) InsertQuestion(ctx context.Context, q *hub.Question) error {
	var options any
	if len(q.Options) > 0 {
		b, err := json.Marshal(q.Options)
		if err != nil {
			return err
		}
		options = string(b)
	}
	return d.exec(ctx, "insert question", `INSERT INTO questions (id, agent_id, owner_id, instance, conversation_id, question, options, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, q.ID, q.AgentID, q.OwnerID, q.Instance, q.ConversationID, q.Question, options, ms(q.CreatedAt))
}

func (d queries) AnswerQuestion(ctx context.Context, id, answer string, at time.Time) error {
	return d.execOne(ctx, "answer question", `UPDATE questions SET answer = ?, answered_at = ? WHERE id = ? AND answered_at IS NULL`, answer, ms(at), id)
}

func (d queries) AckAnswer(ctx context.Context, id string, at time.Time) error {
	return d.exec(ctx, "acknowledge answer", `UPDATE questions SET acked_at = ? WHERE id = ? AND acked_at IS NULL`, ms(at), id)
}

func (d queries) SetAgentMode(ctx context.Context, agentID, mode string) error {
	return d.execOne(ctx, "set agent mode", `UPDATE agents SET mode = ? WHERE id = ?`, mode, agentID)
}

func (d queries) SetBrakeState(ctx context.Context, c *hub.Conversation) error {
	return d.execOne(ctx, "set brake state", `UPDATE conversations SET agent_turns = ?, last_voice = ?, paused_at = ?, paused_reason = ? WHERE id = ?`,
		c.AgentTurns, c.LastVoice, ms(c.PausedAt), c.PausedReason, c.ID)
}

func (d queries) TouchPerson(ctx context.Context, conversationID string, at time.Time) error {
	return d.execOne(ctx, "touch person", `UPDATE conversations SET last_person_at = ?, agent_turns = 0, last_voice = '',
		paused_at = NULL, paused_reason = '' WHERE id = ?`, ms(at), conversationID)
}

func (d queries) DecideMessage(ctx context.Context, m *hub.Message) error {
	return d.execOne(ctx, "decide message", `UPDATE messages SET status = ?, seq = ?, body = ?, body_hash = ?, summary = ?, original_body = ?,
		authority = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'held'`,
		m.Status, nullSeq(m.Seq), m.Body, bodyHash(m.Body), m.Summary, nullString(m.OriginalBody), m.Authority,
		nullString(m.DecidedBy), ms(m.DecidedAt), m.ID)
}

// ---- consent

const contactCols = `user_a, user_b, status, requested_by, decided_by, requested_at, decided_at`

func scanContact(row scanner) (*hub.Contact, error) {
	var c hub.Contact
	var req, dec sql.NullInt64
	if err := row.Scan(&c.UserA, &c.UserB, &c.Status, &c.RequestedBy, &c.DecidedBy, &req, &dec); err != nil {
		return nil, err
	}
	c.RequestedAt, c.DecidedAt = fromMS(req), fromMS(dec)
	return &c, nil
}

func (d queries) Contact(ctx context.Context, userA, userB string) (*hub.Contact, error) {
	a, b := min(userA, userB), max(userA, userB)
	c, err := scanContact(d.q.QueryRowContext(ctx, `SELECT `+contactCols+` FROM contacts WHERE user_a = ? AND user_b = ?`, a, b))
	return c, dbErr("contact", err)
}

func (d queries) ContactsOf(ctx context.Context, userID string) ([]*hub.Contact, error) {
	return queryAll(ctx, d.q, "contacts of", scanContact, `SELECT `+contactCols+` FROM contacts WHERE user_a = ? OR user_b = ? ORDER BY requested_at`, userID, userID)
}

func (d queries) PutContact(ctx context.Context, c *hub.Contact) error {
	c.UserA, c.UserB = min(c.UserA, c.UserB), max(c.UserA, c.UserB)
	return d.exec(ctx, "put contact", `INSERT INTO contacts (`+contactCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_a, user_b) DO UPDATE SET status = excluded.status, requested_by = excluded.requested_by,
		decided_by = excluded.decided_by, requested_at = excluded.requested_at, decided_at = excluded.decided_at`,
		c.UserA, c.UserB, c.Status, c.RequestedBy, c.DecidedBy, ms(c.RequestedAt), ms(c.DecidedAt))
}

const grantCols = `agent_id, contact_id, allow_human, allow_agents, decided_by, updated_at`

func scanGrant(row scanner) (*hub.Grant, error) {
	var g hub.Grant
	var at sql.NullInt64
	if err := row.Scan(&g.AgentID, &g.ContactID, &g.AllowHuman, &g.AllowAgents, &g.DecidedBy, &at); err != nil {
		return nil, err
	}
	g.UpdatedAt = fromMS(at)
	return &g, nil
}

func (d queries) Grant(ctx context.Context, agentID, contactID string) (*hub.Grant, error) {
	g, err := scanGrant(d.q.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants WHERE agent_id = ? AND contact_id = ?`, agentID, contactID))
	return g, dbErr("grant", err)
}

func (d queries) GrantsOf(ctx context.Context, agentID string) ([]*hub.Grant, error) {
	return queryAll(ctx, d.q, "grants of", scanGrant, `SELECT `+grantCols+` FROM grants WHERE agent_id = ? ORDER BY updated_at`, agentID)
}

func (d queries) PutGrant(ctx context.Context, g *hub.Grant) error {
	return d.exec(ctx, "put grant", `INSERT INTO grants (`+grantCols+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, contact_id) DO UPDATE SET allow_human = excluded.allow_human, allow_agents = excluded.allow_agents,
		decided_by = excluded.decided_by, updated_at = excluded.updated_at`,
		g.AgentID, g.ContactID, g.AllowHuman, g.AllowAgents, g.DecidedBy, ms(g.UpdatedAt))
}

const grantRequestCols = `id, agent_id, owner_id, contact_id, allow_human, allow_agents, reason, status, created_at, decided_at`

func scanGrantRequest(row scanner) (*hub.GrantRequest, error) {
	var r hub.GrantRequest
	var created, decided sql.NullInt64
	if err := row.Scan(&r.ID, &r.AgentID, &r.OwnerID, &r.ContactID, &r.AllowHuman, &r.AllowAgents, &r.Reason, &r.Status, &created, &decided); err != nil {
		return nil, err
	}
	r.CreatedAt, r.DecidedAt = fromMS(created), fromMS(decided)
	return &r, nil
}

func (d queries) GrantRequest(ctx context.Context, id string) (*hub.GrantRequest, error) {
	r, err := scanGrantRequest(d.q.QueryRowContext(ctx, `SELECT `+grantRequestCols+` FROM grant_requests WHERE id = ?`, id))
	return r, dbErr("grant request", err)
}

func (d queries) GrantRequests(ctx context.Context, ownerID, agentID string) ([]*hub.GrantRequest, error) {
	return queryAll(ctx, d.q, "grant requests", scanGrantRequest, `SELECT `+grantRequestCols+` FROM grant_requests
		WHERE status = 'pending' AND (? = '' OR owner_id = ?) AND (? = '' OR agent_id = ?) ORDER BY created_at, id`, ownerID, ownerID, agentID, agentID)
}

func (d queries) InsertGrantRequest(ctx context.Context, r *hub.GrantRequest) error {
	return d.exec(ctx, "insert grant request", `INSERT INTO grant_requests (`+grantRequestCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AgentID, r.OwnerID, r.ContactID, r.AllowHuman, r.AllowAgents, r.Reason, r.Status, ms(r.CreatedAt), ms(r.DecidedAt))
}

func (d queries) DecideGrantRequest(ctx context.Context, id, status string, at time.Time) error {
	return d.execOne(ctx, "decide grant request", `UPDATE grant_requests SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending'`, status, ms(at), id)
}

const inboundCols = `id, agent_id, user_id, handles, status, created_at, decided_at`

func scanInbound(row scanner) (*hub.InboundAsk, error) {
	var a hub.InboundAsk
	var handles string
	var created, decided sql.NullInt64
	if err := row.Scan(&a.ID, &a.AgentID, &a.UserID, &handles, &a.Status, &created, &decided); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(handles), &a.Handles); err != nil {
		return nil, err
	}
	a.CreatedAt, a.DecidedAt = fromMS(created), fromMS(decided)
	return &a, nil
}

func (d queries) InboundAsk(ctx context.Context, agentID, userID string) (*hub.InboundAsk, error) {
	a, err := scanInbound(d.q.QueryRowContext(ctx, `SELECT `+inboundCols+` FROM inbound_asks WHERE agent_id = ? AND user_id = ?`, agentID, userID))
	return a, dbErr("inbound ask", err)
}

func (d queries) InboundAskByID(ctx context.Context, id string) (*hub.InboundAsk, error) {
	a, err := scanInbound(d.q.QueryRowContext(ctx, `SELECT `+inboundCols+` FROM inbound_asks WHERE id = ?`, id))
	return a, dbErr("inbound ask", err)
}

func (d queries) PendingInboundAsks(ctx context.Context, userID string) ([]*hub.InboundAsk, error) {
	return queryAll(ctx, d.q, "inbound asks", scanInbound, `SELECT `+inboundCols+` FROM inbound_asks WHERE user_id = ? AND status = 'pending' ORDER BY created_at, id`, userID)
}

func (d queries) PutInboundAsk(ctx context.Context, a *hub.InboundAsk) error {
	handles, err := json.Marshal(a.Handles)
	if err != nil {
		return err
	}
	return d.exec(ctx, "put inbound ask", `INSERT INTO inbound_asks (`+inboundCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent_id, user_id) DO UPDATE SET handles = excluded.handles, status = excluded.status,
		created_at = excluded.created_at, decided_at = excluded.decided_at`,
		a.ID, a.AgentID, a.UserID, string(handles), a.Status, ms(a.CreatedAt), ms(a.DecidedAt))
}

func (d queries) SetInboundAskStatus(ctx context.Context, id, status string, at time.Time) (bool, error) {
	res, err := d.q.ExecContext(ctx, `UPDATE inbound_asks SET status = ?, decided_at = ? WHERE id = ? AND status <> ?`, status, ms(at), id, status)
	if err != nil {
		return false, dbErr("decide inbound ask", err)
	}
	n, err := res.RowsAffected()
	return n > 0, dbErr("decide inbound ask", err)
}

func (d queries) SetHold(ctx context.Context, agentID, conversationID, instance string, at time.Time) error {
	return d.exec(ctx, "set hold", `INSERT INTO holds (agent_id, conversation_id, instance, since) VALUES (?, ?, ?, ?)
		ON CONFLICT (agent_id, conversation_id) DO UPDATE SET instance = excluded.instance, since = excluded.since`,
		agentID, conversationID, instance, ms(at))
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
		&m.ClientMsgID, &m.Author, &m.Authority, &m.OwnerID, &m.OwnerHandle, &s.created, &m.OriginalBody, &m.DecidedBy, &s.decided}
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

func (d queries) InsertDeliveries(ctx context.Context, m *hub.Message, agentIDs []string) error {
	for rows := range slices.Chunk(agentIDs, rowsPerInsert) {
		args := make([]any, 0, 3*len(rows))
		for _, id := range rows {
			args = append(args, m.ID, id, m.ConversationID)
		}
		if err := d.exec(ctx, "insert deliveries", `INSERT INTO deliveries (message_id, agent_id, conversation_id) VALUES `+valueRows(len(rows), 3), args...); err != nil {
			return err
		}
	}
	return nil
}

// rowsPerInsert bounds the rows of one multi-row INSERT, and so the
// distinct statements the cache holds for it.
const rowsPerInsert = 32

// valueRows is the VALUES list of n rows of k placeholders: (?, ?), (?, ?).
func valueRows(n, k int) string {
	row := "(" + strings.Repeat("?, ", k-1) + "?)"
	return strings.Repeat(row+", ", n-1) + row
}

func (d queries) MarkFetched(ctx context.Context, agentID string, messageIDs []string, at time.Time) error {
	for _, id := range messageIDs {
		if err := d.exec(ctx, "mark fetched", `UPDATE deliveries SET fetched_at = ? WHERE agent_id = ? AND message_id = ? AND fetched_at IS NULL`, ms(at), agentID, id); err != nil {
			return err
		}
	}
	return nil
}

func (d queries) SetDeliveryState(ctx context.Context, agentID, messageID, state, errText string, at time.Time) error {
	switch state {
	case hub.DeliveryDone:
		return d.execOne(ctx, "acknowledge", `UPDATE deliveries SET state = ?, acked_at = ? WHERE agent_id = ? AND message_id = ?`, state, ms(at), agentID, messageID)
	case hub.DeliveryFailed:
		return d.execOne(ctx, "record failure", `UPDATE deliveries SET state = ?, attempts = attempts + 1, error = ? WHERE agent_id = ? AND message_id = ?`, state, errText, agentID, messageID)
	}
	return fmt.Errorf("set delivery state: unknown state %q", state)
}

// ---- events

// InsertEvents inserts up to rowsPerInsert events a statement. Ids grow in
// the order rows are inserted: on SQLite they are consecutive up to
// LastInsertId; elsewhere the returned ids, sorted, are the events' in
// order.
func (d queries) InsertEvents(ctx context.Context, events []*hub.Event) error {
	if len(events) > 0 && d.dialect.eventLock != "" {
		if err := d.exec(ctx, "event lock", d.dialect.eventLock); err != nil {
			return err
		}
	}
	for rows := range slices.Chunk(events, rowsPerInsert) {
		args := make([]any, 0, 6*len(rows))
		for _, e := range rows {
			var data any
			if len(e.Data) > 0 {
				data = string(e.Data)
			}
			args = append(args, e.RecipientID, e.Type, e.ConversationID, e.MessageID, data, ms(e.CreatedAt))
		}
		insert := `INSERT INTO events (recipient_id, type, conversation_id, message_id, data, created_at) VALUES ` + valueRows(len(rows), 6)
		var ids []int64
		if d.dialect.consecutiveIDs {
			res, err := d.q.ExecContext(ctx, insert, args...)
			if err != nil {
				return dbErr("insert events", err)
			}
			last, err := res.LastInsertId()
			if err != nil {
				return dbErr("insert events", err)
			}
			for i := range rows {
				ids = append(ids, last-int64(len(rows)-1-i))
			}
		} else {
			var err error
			ids, err = queryAll(ctx, d.q, "insert events", func(row scanner) (int64, error) {
				var id int64
				return id, row.Scan(&id)
			}, insert+` RETURNING id`, args...)
			if err != nil {
				return err
			}
		}
		if len(ids) != len(rows) {
			return fmt.Errorf("insert events: %d ids for %d events", len(ids), len(rows))
		}
		slices.Sort(ids)
		for i, e := range rows {
			e.ID = ids[i]
		}
	}
	return nil
}

func (d queries) EventsAfter(ctx context.Context, recipientID string, after int64, limit int) ([]*hub.Event, error) {
	rows, err := d.q.QueryContext(ctx, `SELECT id, type, conversation_id, message_id, data, created_at
		FROM events WHERE recipient_id = ? AND id > ? ORDER BY id LIMIT ?`, recipientID, after, limit)
	if err != nil {
		return nil, dbErr("events after", err)
	}
	defer rows.Close()
	var out []*hub.Event
	var msgIDs []any
	for rows.Next() {
		e := &hub.Event{RecipientID: recipientID}
		var data sql.NullString
		var created sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Type, &e.ConversationID, &e.MessageID, &data, &created); err != nil {
			return nil, dbErr("events after", err)
		}
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		e.CreatedAt = fromMS(created)
		if e.MessageID != "" {
			msgIDs = append(msgIDs, e.MessageID)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil || len(msgIDs) == 0 {
		return out, dbErr("events after", err)
	}
	rows.Close()
	msgs, err := d.messagesByID(ctx, msgIDs)
	if err != nil {
		return nil, err
	}
	for _, e := range out {
		e.Message = msgs[e.MessageID]
	}
	return out, nil
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

func (d queries) LatestEventID(ctx context.Context) (int64, error) {
	var id int64
	err := d.q.QueryRowContext(ctx, d.dialect.latestEvent).Scan(&id)
	return id, dbErr("latest event", err)
}

func (d queries) EventRecipients(ctx context.Context, after, upTo int64) ([]string, error) {
	return queryAll(ctx, d.q, "event recipients", func(row scanner) (string, error) {
		var id string
		return id, row.Scan(&id)
	}, `SELECT DISTINCT recipient_id FROM events WHERE id > ? AND id <= ?`, after, upTo)
}

func (d queries) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	var through sql.NullInt64
	if err := d.q.QueryRowContext(ctx, `SELECT MAX(id) FROM events WHERE created_at < ?`, ms(before)).Scan(&through); err != nil {
		return 0, dbErr("prune events", err)
	}
	if !through.Valid {
		return 0, nil
	}
	if err := d.exec(ctx, "prune events", `DELETE FROM events WHERE id <= ?`, through.Int64); err != nil {
		return 0, err
	}
	return through.Int64, d.SetMeta(ctx, hub.MetaPrunedThrough, strconv.FormatInt(through.Int64, 10))
}
