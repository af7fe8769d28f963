-- Remote A2A agents (DESIGN.md §18, "Out"): an agent of its owner that
-- lives elsewhere and is called over A2A at the interface its Agent Card
-- names. Its agents row makes it a participant like any; this row says
-- where it is. The credential (an Authorization header's value) is kept
-- to present and never shown back.
CREATE TABLE remote_agents (
    agent_id     TEXT PRIMARY KEY REFERENCES agents(id),
    card_url     TEXT NOT NULL,
    credential   TEXT NOT NULL DEFAULT '',
    name         TEXT NOT NULL DEFAULT '',
    description  TEXT NOT NULL DEFAULT '',
    provider     TEXT NOT NULL DEFAULT '',
    skills       TEXT NOT NULL DEFAULT '',
    endpoint     TEXT NOT NULL,
    version      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fetched_at   INTEGER NOT NULL,
    removed_at   INTEGER,
    last_at      INTEGER,
    last_error   TEXT NOT NULL DEFAULT ''
);

-- The remote outbox: one call per message to a remote agent, written in
-- the send's transaction and deleted once its answer is in the
-- conversation. Its id is the A2A messageId, the same on every retry;
-- task_id, once the remote made a task, turns the next attempts into
-- asking after it.
CREATE TABLE remote_calls (
    id              TEXT PRIMARY KEY,
    agent_id        TEXT NOT NULL REFERENCES remote_agents(agent_id),
    conversation_id TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    sender_handle   TEXT NOT NULL,
    body            TEXT NOT NULL,
    task_id         TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    due_at          INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    UNIQUE (agent_id, message_id)
);
CREATE INDEX remote_calls_due ON remote_calls (due_at);

-- A message a remote agent's answer became names the card it came from.
ALTER TABLE messages ADD COLUMN remote_url TEXT NOT NULL DEFAULT '';
