-- Search is filled after the commit, in batches (DESIGN.md §17, §18): a
-- send no longer writes the search index. The indexer (indexer.go) indexes
-- the sent messages whose rowid is past search_indexed_through, and every
-- message noted in message_search_pending, and moves the mark in the same
-- transaction, so a crash neither loses nor doubles an entry. Rowids grow
-- in commit order (one writer; messages are never deleted).
--
-- A held message is passed over while it is held, and the mark may pass
-- it: approving it notes it in message_search_pending (the trigger
-- messages_search_approved of 0015 stays), and the indexer indexes it with
-- its final words. A rejected message never is.
DROP TRIGGER messages_search_sent;

-- Every commit before this one indexed what it noted, so nothing is
-- pending; anything that is, is indexed now.
INSERT INTO message_search (rowid, conversation, summary, body)
    SELECT m.rowid, replace(m.conversation_id, '_', ''), palaver_search_text(m.summary), palaver_search_text(m.body)
    FROM message_search_pending p JOIN messages m ON m.rowid = p.message_rowid WHERE m.status = 'sent';
DELETE FROM message_search_pending;

-- The messages stored so far are indexed (or held, and noted when
-- approved): the mark starts after them.
INSERT INTO meta (key, value)
    SELECT 'search_indexed_through', CAST(COALESCE(MAX(rowid), 0) AS TEXT) FROM messages;
