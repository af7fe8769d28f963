-- Accounts (DESIGN.md §11.1): people's passwords (argon2id hashes), the
-- admin (the first person), sign-ins to the dashboard and invitations.
ALTER TABLE users ADD COLUMN password_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN admin BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE users SET admin = TRUE WHERE id = (SELECT id FROM users ORDER BY created_at, id LIMIT 1);

-- One row for each browser a person signed in from; the cookie holds the
-- secret, the row only its SHA-256.
CREATE TABLE logins (
    id           TEXT PRIMARY KEY,
    hash         BYTEA NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users(id),
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);
CREATE INDEX logins_user ON logins (user_id);

CREATE TABLE invites (
    id         TEXT PRIMARY KEY,
    hash       BYTEA NOT NULL UNIQUE,
    created_by TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT,
    used_by    TEXT NOT NULL DEFAULT ''
);

-- A person's conversations: theirs and their agents', by the owner of each
-- participant.
CREATE INDEX participants_owner ON participants (owner_id, conversation_id) WHERE left_at IS NULL;
