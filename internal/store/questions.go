package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Agents' questions to their owners (§9).

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
