-- Brakes, review and owner questions (DESIGN.md §7, §9).

-- What the brakes count since a person last took part in a conversation:
-- turns between agents (a change of voice) and the voice that spoke last.
ALTER TABLE conversations ADD COLUMN last_person_at BIGINT;
ALTER TABLE conversations ADD COLUMN agent_turns BIGINT NOT NULL DEFAULT 0;
ALTER TABLE conversations ADD COLUMN last_voice TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN paused_at BIGINT;
ALTER TABLE conversations ADD COLUMN paused_reason TEXT NOT NULL DEFAULT '';

-- The loop brake reads a thread's last two hours; the duplicate brake finds
-- an agent's earlier messages with the same words by their hash.
CREATE INDEX messages_recent ON messages (conversation_id, created_at);
ALTER TABLE messages ADD COLUMN body_hash TEXT NOT NULL DEFAULT '';
CREATE INDEX messages_duplicate ON messages (sender_id, conversation_id, body_hash, created_at);

-- An agent's questions to its owner, and the answers.
CREATE TABLE questions (
    id              TEXT PRIMARY KEY,
    agent_id        TEXT NOT NULL REFERENCES agents(id),
    owner_id        TEXT NOT NULL REFERENCES users(id),
    instance        TEXT NOT NULL DEFAULT '',
    conversation_id TEXT NOT NULL DEFAULT '',
    question        TEXT NOT NULL,
    options         TEXT,
    answer          TEXT,
    answered_at     BIGINT,
    acked_at        BIGINT,
    created_at      BIGINT NOT NULL
);
CREATE INDEX questions_owner ON questions (owner_id, answered_at);
CREATE INDEX questions_agent ON questions (agent_id, acked_at);
