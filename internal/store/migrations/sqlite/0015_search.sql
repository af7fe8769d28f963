-- Search (DESIGN.md §18): a full-text index of every sent message's
-- summary and body, FTS5 split by the unicode61 tokenizer with diacritics
-- kept (as PostgreSQL's 'simple' configuration keeps them). It is
-- contentless: the words stay in messages, and a row of the index is the
-- message's rowid with its terms, and its conversation's id as one term
-- (the id without its underscore) so that a search of a few conversations
-- looks only at theirs. VACUUM, and so VACUUM INTO (palaver backup), keeps
-- the rowids of a table with indexes, as messages has; a store test holds
-- a backup to it.
--
-- A message is indexed in the transaction that makes it sent — stored
-- sent, or a held one approved (with its final words when its owner edited
-- them) — so it is findable once that transaction commits; a held or
-- rejected message never is. FTS5 writes a segment for each statement that
-- inserts into it, so the statement only notes the message in
-- message_search_pending and the writer indexes what a group commit noted
-- in one statement before it commits (beforeCommit in sqlite.go). Messages are
-- never deleted nor their words changed once sent, so the index only
-- grows.
CREATE VIRTUAL TABLE message_search USING fts5(
    conversation, summary, body,
    content = '',
    tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TABLE message_search_pending (message_rowid INTEGER PRIMARY KEY);

CREATE TRIGGER messages_search_sent AFTER INSERT ON messages WHEN new.status = 'sent' BEGIN
    INSERT INTO message_search_pending (message_rowid) VALUES (new.rowid);
END;

CREATE TRIGGER messages_search_approved AFTER UPDATE OF status ON messages
WHEN new.status = 'sent' AND old.status <> 'sent' BEGIN
    INSERT INTO message_search_pending (message_rowid) VALUES (new.rowid);
END;

-- The messages sent before this migration.
INSERT INTO message_search (rowid, conversation, summary, body)
    SELECT rowid, replace(conversation_id, '_', ''), summary, body FROM messages WHERE status = 'sent';
