-- Webhooks (DESIGN.md §18): HTTPS endpoints an owner gives an agent, called
-- when an event arrives for it while none of its sessions waits. The secret
-- (whsec_…) is kept to sign with; the owner is shown it once.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    agent_id        TEXT NOT NULL REFERENCES agents(id),
    url             TEXT NOT NULL,
    secret          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    disabled_at     INTEGER,
    disabled_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX webhooks_agent ON webhooks (agent_id);

-- The outbox: a call still to make, written in the transaction of the event
-- it tells of and deleted once delivered. Its id is the webhook-id, the same
-- on every retry. due_at is when it may be sent next: a claim moves it on by
-- a lease, so a server that stops mid-call leaves it to be sent again.
CREATE TABLE webhook_calls (
    id         TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id   INTEGER NOT NULL,
    type       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    due_at     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_calls_due ON webhook_calls (due_at);
CREATE INDEX webhook_calls_webhook ON webhook_calls (webhook_id);

-- Each endpoint's latest attempts: its delivery log.
CREATE TABLE webhook_attempts (
    id          TEXT PRIMARY KEY,
    webhook_id  TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    call_id     TEXT NOT NULL,
    type        TEXT NOT NULL,
    at          INTEGER NOT NULL,
    status      INTEGER NOT NULL DEFAULT 0,
    error       TEXT NOT NULL DEFAULT '',
    duration_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
