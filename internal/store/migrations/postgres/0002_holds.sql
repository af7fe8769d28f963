-- Sessions holding conversations (DESIGN.md §5): the session of an agent
-- that last spoke in a conversation, or claimed it, answers what is
-- addressed to nobody there.
CREATE TABLE holds (
    agent_id        TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    instance        TEXT NOT NULL,
    since           BIGINT NOT NULL,
    PRIMARY KEY (agent_id, conversation_id)
);

-- A session waits for its sibling sessions' words in shared conversations;
-- brakes count an agent's recent messages in a conversation.
CREATE INDEX messages_sender ON messages (sender_id, conversation_id, created_at);
