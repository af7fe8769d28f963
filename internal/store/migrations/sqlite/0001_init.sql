-- Palaver's first schema (DESIGN.md §1–§6). Times are Unix milliseconds;
-- ids are prefixed strings made in Go.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    handle     TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);

CREATE TABLE agents (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users(id),
    slug        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    goal        TEXT NOT NULL DEFAULT '',
    mode        TEXT NOT NULL DEFAULT 'active',
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    UNIQUE (owner_id, slug)
);

CREATE TABLE instances (
    agent_id     TEXT NOT NULL REFERENCES agents(id),
    name         TEXT NOT NULL,
    note         TEXT NOT NULL DEFAULT '',
    last_seen_at INTEGER NOT NULL,
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (agent_id, name)
);

CREATE TABLE tokens (
    id           TEXT PRIMARY KEY,
    hash         BLOB NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users(id),
    agent_id     TEXT REFERENCES agents(id),
    name         TEXT NOT NULL DEFAULT '',
    scopes       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    revoked_at   INTEGER
);
CREATE INDEX tokens_user ON tokens (user_id, agent_id);

CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    kind       TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    goal       TEXT NOT NULL DEFAULT '',
    status     TEXT NOT NULL,
    direct_key TEXT,
    creator_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0
);
-- Opening the same set of participants finds the same direct conversation
-- until it is closed.
CREATE UNIQUE INDEX conversations_direct ON conversations (direct_key)
    WHERE direct_key IS NOT NULL AND status <> 'closed';

CREATE TABLE participants (
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    principal_id    TEXT NOT NULL,
    kind            TEXT NOT NULL,
    owner_id        TEXT NOT NULL,
    role            TEXT NOT NULL,
    joined_at       INTEGER NOT NULL,
    left_at         INTEGER,
    PRIMARY KEY (conversation_id, principal_id)
);
CREATE INDEX participants_principal ON participants (principal_id);

CREATE TABLE messages (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    seq             INTEGER,              -- NULL while held for review
    status          TEXT NOT NULL DEFAULT 'sent', -- sent, held, rejected
    sender_id       TEXT NOT NULL,
    sender_kind     TEXT NOT NULL,
    sender_handle   TEXT NOT NULL,
    sender_instance TEXT NOT NULL DEFAULT '',
    body            TEXT NOT NULL,
    summary         TEXT NOT NULL DEFAULT '',
    format          TEXT NOT NULL,
    kind            TEXT NOT NULL,
    metadata        TEXT,
    mentions        TEXT,
    reply_to_seq    INTEGER NOT NULL DEFAULT 0,
    no_reply        INTEGER NOT NULL DEFAULT 0,
    to_instance     TEXT NOT NULL DEFAULT '',
    client_msg_id   TEXT,
    author          TEXT NOT NULL,
    authority       TEXT NOT NULL,
    owner_id        TEXT NOT NULL,
    owner_handle    TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    original_body   TEXT,                 -- the agent's words, when the owner edited them
    decided_by      TEXT,                 -- the owner who approved or rejected a held message
    decided_at      INTEGER,
    UNIQUE (conversation_id, seq)
);
CREATE UNIQUE INDEX messages_client_msg_id ON messages (sender_id, client_msg_id)
    WHERE client_msg_id IS NOT NULL;

CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY,
    message_id      TEXT NOT NULL REFERENCES messages(id),
    agent_id        TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'waiting',
    attempts        INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    fetched_at      INTEGER,
    acked_at        INTEGER,
    UNIQUE (agent_id, message_id)
);
-- The inbox: an agent's waiting deliveries, oldest first.
CREATE INDEX deliveries_waiting ON deliveries (agent_id, id) WHERE acked_at IS NULL;

CREATE TABLE reads (
    conversation_id TEXT NOT NULL,
    principal_id    TEXT NOT NULL,
    instance        TEXT NOT NULL DEFAULT '',
    last_read_seq   INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, principal_id, instance)
);

CREATE TABLE events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient_id    TEXT NOT NULL,
    type            TEXT NOT NULL,
    conversation_id TEXT NOT NULL DEFAULT '',
    message_id      TEXT NOT NULL DEFAULT '',
    data            TEXT,
    created_at      INTEGER NOT NULL
);
CREATE INDEX events_recipient ON events (recipient_id, id);
CREATE INDEX events_created ON events (created_at);
