-- Claude Code's requests to use a tool, relayed by an agent's channel to
-- its owner, and the owner's verdicts (DESIGN.md §19).
CREATE TABLE permissions (
    id            TEXT PRIMARY KEY,
    agent_id      TEXT NOT NULL REFERENCES agents(id),
    owner_id      TEXT NOT NULL REFERENCES users(id),
    instance      TEXT NOT NULL DEFAULT '',
    request_id    TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    input_preview TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL,
    decided_by    TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    decided_at    BIGINT
);
CREATE INDEX permissions_owner ON permissions (owner_id, status, created_at);
