-- Two fewer B-trees a send writes (DESIGN.md §17): the events' ids without
-- AUTOINCREMENT, so no sqlite_sequence row to update, and no index on
-- created_at. SQLite cannot drop AUTOINCREMENT in place, so the table is
-- built again; no trigger or view names it.
--
-- Ids are cursors (§6) and are never given twice. Without AUTOINCREMENT a
-- new row's id is one past the largest in the table, so the store keeps
-- the largest ever given there: pruning never deletes the newest event's
-- row but blanks it (recipient '', whom no reader asks for; events.go).
-- AUTOINCREMENT's counter is carried over the same way: if it stands
-- above the largest id kept (pruning had deleted the newest events), a
-- blank row holds it, dated like the newest event so that ids stay in
-- the order of their times.
--
-- Pruning finds its bound by a binary search over the ids instead of the
-- index on created_at: SQLite's one writer commits events in id order,
-- each dated by the hub's clock as it is made.
CREATE TABLE events_next (
    id              INTEGER PRIMARY KEY,
    recipient_id    TEXT NOT NULL,
    type            TEXT NOT NULL,
    conversation_id TEXT NOT NULL DEFAULT '',
    message_id      TEXT NOT NULL DEFAULT '',
    data            TEXT,
    created_at      INTEGER NOT NULL,
    tx              INTEGER NOT NULL DEFAULT 0
);
INSERT INTO events_next (id, recipient_id, type, conversation_id, message_id, data, created_at, tx)
    SELECT id, recipient_id, type, conversation_id, message_id, data, created_at, tx FROM events;
INSERT INTO events_next (id, recipient_id, type, created_at)
    SELECT seq, '', '', COALESCE((SELECT MAX(created_at) FROM events), 0) FROM sqlite_sequence
    WHERE name = 'events' AND seq > COALESCE((SELECT MAX(id) FROM events), 0);
DROP TABLE events;
ALTER TABLE events_next RENAME TO events;
CREATE INDEX events_recipient ON events (recipient_id, id);
