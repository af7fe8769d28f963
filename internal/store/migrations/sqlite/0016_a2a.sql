-- A2A (DESIGN.md §18): an owner exposes an agent to A2A clients, with the
-- skills its Agent Card lists (a JSON array of {id, name, description}).
-- No row: never exposed.
CREATE TABLE a2a_agents (
    agent_id   TEXT PRIMARY KEY REFERENCES agents(id),
    exposed    INTEGER NOT NULL DEFAULT 0,
    skills     TEXT NOT NULL DEFAULT '[]',
    updated_at INTEGER NOT NULL
);

-- An A2A task is the request message an A2A client sent to the agent: its
-- id is the message's id, its state the delivery's (§5). The row says who
-- asked, so a change of that delivery is told to them.
CREATE TABLE a2a_tasks (
    message_id      TEXT PRIMARY KEY,
    agent_id        TEXT NOT NULL REFERENCES agents(id),
    caller_id       TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE INDEX a2a_tasks_conversation ON a2a_tasks (conversation_id, agent_id);
