-- OAuth 2.1 (DESIGN.md §2, §10.6). A client is registered (RFC 7591; its
-- id is made here) or known by its metadata document (its id is the
-- document's URL, fetched again once the copy here is old).
CREATE TABLE oauth_clients (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL DEFAULT '',
    redirect_uris    TEXT NOT NULL,
    application_type TEXT NOT NULL DEFAULT 'web',
    document         BOOLEAN NOT NULL DEFAULT FALSE,
    created_at       BIGINT NOT NULL,
    fetched_at       BIGINT
);

-- A person letting a client act as one of their agents: what they chose
-- on the consent page. Its tokens (access and refresh, in tokens) carry
-- its id; revoking it ends them all.
CREATE TABLE oauth_grants (
    id           TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES oauth_clients(id),
    user_id      TEXT NOT NULL REFERENCES users(id),
    agent_id     TEXT NOT NULL REFERENCES agents(id),
    scopes       TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    resource     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id);

-- Authorization codes, by the hash of the code; used once.
CREATE TABLE oauth_codes (
    hash       BYTEA PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants(id),
    challenge  TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);

-- OAuth tokens live beside static ones: one verifier, immediate revocation.
ALTER TABLE tokens ADD COLUMN grant_id TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN resource TEXT NOT NULL DEFAULT '';
CREATE INDEX tokens_grant ON tokens (grant_id) WHERE grant_id <> '';
