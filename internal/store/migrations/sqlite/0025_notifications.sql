-- Owner notifications (DESIGN.md §19): the time zone a person's quiet
-- hours are read in ('' is UTC), where they are told (a browser's Web Push
-- subscription, an ntfy topic), what they want to hear of, the outbox of
-- notifications still to send and each person's delivery log.
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';

CREATE TABLE notify_targets (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id),
    kind       TEXT NOT NULL,
    url        TEXT NOT NULL,
    p256dh     TEXT NOT NULL DEFAULT '',
    auth       TEXT NOT NULL DEFAULT '',
    token      TEXT NOT NULL DEFAULT '',
    label      TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
);
CREATE INDEX notify_targets_user ON notify_targets (user_id);
CREATE UNIQUE INDEX notify_targets_url ON notify_targets (user_id, url);

-- kinds: the kinds that notify, comma-separated. quiet_from and quiet_to
-- are minutes after midnight (equal: no quiet hours); urgent ones pass
-- through them when quiet_urgent is 1.
CREATE TABLE notify_prefs (
    user_id      TEXT PRIMARY KEY REFERENCES users(id),
    kinds        TEXT NOT NULL,
    quiet_from   INTEGER NOT NULL DEFAULT 0,
    quiet_to     INTEGER NOT NULL DEFAULT 0,
    quiet_urgent INTEGER NOT NULL DEFAULT 0
);

-- The outbox: a notification still to send to one target, written in the
-- transaction of the event it tells of. Its id is the same on every retry;
-- item is what it is about (one notification per item and target). A sent
-- one keeps its row, sent_at set, so the same item is not told again and
-- the last minute's count is known.
CREATE TABLE notifications (
    id         TEXT PRIMARY KEY,
    target_id  TEXT NOT NULL REFERENCES notify_targets(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    item       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    due_at     INTEGER NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    sent_at    INTEGER
);
CREATE UNIQUE INDEX notifications_item ON notifications (target_id, item);
CREATE INDEX notifications_due ON notifications (due_at);
CREATE INDEX notifications_user ON notifications (user_id, created_at);

-- Each person's latest attempts and drops: their delivery log.
CREATE TABLE notify_log (
    id              TEXT PRIMARY KEY,
    user_id         TEXT NOT NULL,
    target_id       TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    kind            TEXT NOT NULL,
    at              INTEGER NOT NULL,
    status          INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notify_log_user ON notify_log (user_id, at);
