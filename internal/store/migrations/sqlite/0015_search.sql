-- Search (DESIGN.md §18): a full-text index of every sent message's
-- summary and body. The index is FTS5, contentless (the words stay in
-- messages; the index keeps only the message's id beside its terms), split
-- by the unicode61 tokenizer with diacritics kept, as PostgreSQL's 'simple'
-- configuration keeps them. A message is indexed by the statement that
-- makes it sent — stored sent, or a held one approved (with its final
-- words when its owner edited them) — so it is findable once that
-- transaction commits; a held or rejected message never is. Messages are
-- never deleted nor their words changed once sent, so the index only grows.
CREATE VIRTUAL TABLE message_search USING fts5(
    message_id UNINDEXED, summary, body,
    content = '', contentless_unindexed = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TRIGGER messages_search_sent AFTER INSERT ON messages WHEN new.status = 'sent' BEGIN
    INSERT INTO message_search (message_id, summary, body) VALUES (new.id, new.summary, new.body);
END;

CREATE TRIGGER messages_search_approved AFTER UPDATE OF status ON messages
WHEN new.status = 'sent' AND old.status <> 'sent' BEGIN
    INSERT INTO message_search (message_id, summary, body) VALUES (new.id, new.summary, new.body);
END;

-- The messages sent before this migration.
INSERT INTO message_search (message_id, summary, body)
    SELECT id, summary, body FROM messages WHERE status = 'sent';
