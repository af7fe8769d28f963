-- Consent between owners (DESIGN.md §3): contacts between people, grants of
-- reach from an owner to an agent, requests for grants, and inbound asks (a
-- person letting another owner's agent in).

CREATE TABLE contacts (
    user_a       TEXT NOT NULL,          -- the lesser user id of the pair
    user_b       TEXT NOT NULL,
    status       TEXT NOT NULL,          -- pending, accepted, rejected, cancelled
    requested_by TEXT NOT NULL,
    decided_by   TEXT NOT NULL DEFAULT '',
    requested_at INTEGER NOT NULL,
    decided_at   INTEGER,
    PRIMARY KEY (user_a, user_b)
);

CREATE TABLE grants (
    agent_id     TEXT NOT NULL,
    contact_id   TEXT NOT NULL,          -- the person whose side the agent may reach
    allow_human  INTEGER NOT NULL,
    allow_agents INTEGER NOT NULL,
    decided_by   TEXT NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (agent_id, contact_id)
);

CREATE TABLE grant_requests (
    id           TEXT PRIMARY KEY,
    agent_id     TEXT NOT NULL,
    owner_id     TEXT NOT NULL,
    contact_id   TEXT NOT NULL,
    allow_human  INTEGER NOT NULL,
    allow_agents INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    status       TEXT NOT NULL,          -- pending, approved, rejected
    created_at   INTEGER NOT NULL,
    decided_at   INTEGER
);
CREATE INDEX grant_requests_owner ON grant_requests (owner_id, status);

CREATE TABLE inbound_asks (
    id           TEXT PRIMARY KEY,
    agent_id     TEXT NOT NULL,          -- the asking agent
    user_id      TEXT NOT NULL,          -- the person who lets it in, or not
    handles      TEXT NOT NULL,          -- the open_conversation it asked for, JSON
    status       TEXT NOT NULL,          -- pending, approved, denied
    created_at   INTEGER NOT NULL,
    decided_at   INTEGER,
    UNIQUE (agent_id, user_id)
);
CREATE INDEX inbound_asks_user ON inbound_asks (user_id, status);
