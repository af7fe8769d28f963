-- Who listens (DESIGN.md §19): one row per replica and session with waits
-- parked there, written when the first parks, renewed at most once a
-- minute (ends_at is a lease) and once more when the last ended (ends_at
-- is then when). Replicas read each other's presence here.
CREATE TABLE listeners (
    principal_id TEXT NOT NULL,
    instance     TEXT NOT NULL,
    replica      TEXT NOT NULL,
    since        INTEGER NOT NULL,
    ends_at      INTEGER NOT NULL,
    PRIMARY KEY (principal_id, instance, replica)
);
CREATE INDEX listeners_ends ON listeners (ends_at);
-- When an agent was last active: the latest use of any of its tokens.
CREATE INDEX tokens_agent_used ON tokens (agent_id, last_used_at);
