-- Projects (DESIGN.md §8): owned by a person, with members (people), agents
-- brought in by their own owners, threads, items with their history, and
-- images. Agents' proposals and access requests wait on their owners.

CREATE TABLE projects (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users(id),
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    agent_cap   TEXT NOT NULL DEFAULT '',  -- '', listen or off: the most any agent may do here
    home        INTEGER NOT NULL DEFAULT 0, -- the owner's home project
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE project_members (
    project_id TEXT NOT NULL REFERENCES projects(id),
    user_id    TEXT NOT NULL REFERENCES users(id),
    added_at   INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE INDEX project_members_user ON project_members (user_id);

CREATE TABLE project_agents (
    project_id TEXT NOT NULL REFERENCES projects(id),
    agent_id   TEXT NOT NULL REFERENCES agents(id),
    access     TEXT NOT NULL,              -- speak or listen, as the agent's owner set it
    review     INTEGER NOT NULL DEFAULT 0, -- its sends here are held for its owner
    added_at   INTEGER NOT NULL,
    PRIMARY KEY (project_id, agent_id)
);
CREATE INDEX project_agents_agent ON project_agents (agent_id);

CREATE TABLE project_requests (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,            -- proposal or access
    agent_id    TEXT NOT NULL REFERENCES agents(id),
    owner_id    TEXT NOT NULL,            -- the agent's owner, who decides
    project_id  TEXT NOT NULL DEFAULT '', -- access: the project; proposal: the one approval made
    name        TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL DEFAULT '',
    instance    TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,            -- pending, approved, rejected
    decided_by  TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    decided_at  INTEGER
);
CREATE INDEX project_requests_owner ON project_requests (owner_id, status);

CREATE TABLE items (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id),
    kind       TEXT NOT NULL,
    title      TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    url        TEXT NOT NULL DEFAULT '',
    status     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX items_project ON items (project_id, created_at);

-- Every change of an item, with who made it and from which session.
CREATE TABLE item_changes (
    id        INTEGER PRIMARY KEY,
    item_id   TEXT NOT NULL REFERENCES items(id),
    by_id     TEXT NOT NULL,
    by_handle TEXT NOT NULL,
    instance  TEXT NOT NULL DEFAULT '',
    changes   TEXT NOT NULL,               -- JSON object: each field changed and its new value
    at        INTEGER NOT NULL
);
CREATE INDEX item_changes_item ON item_changes (item_id, id);

-- Image bytes by their SHA-256, stored once however many projects hold them.
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    data   BLOB NOT NULL
);

CREATE TABLE images (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id),
    sha256      TEXT NOT NULL REFERENCES blobs(sha256),
    mime        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    filename    TEXT NOT NULL DEFAULT '',
    alt         TEXT NOT NULL DEFAULT '',
    uploaded_by TEXT NOT NULL,
    instance    TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    UNIQUE (project_id, sha256)
);

-- A thread belongs to a project (and maybe one item); the same title,
-- trimmed and case-folded, or the same item finds the same open thread.
ALTER TABLE conversations ADD COLUMN project_id TEXT;
ALTER TABLE conversations ADD COLUMN item_id TEXT;
ALTER TABLE conversations ADD COLUMN thread_key TEXT;
CREATE UNIQUE INDEX conversations_thread ON conversations (project_id, thread_key)
    WHERE thread_key IS NOT NULL AND status <> 'closed';

-- Contact requests join the approvals list, where each is named by an id.
ALTER TABLE contacts ADD COLUMN id TEXT NOT NULL DEFAULT '';
UPDATE contacts SET id = 'ct_' || lower(hex(randomblob(13)));
CREATE UNIQUE INDEX contacts_id ON contacts (id);
