-- Search matches text that reads the same (DESIGN.md §18): the index holds
-- each summary's and body's search words as the hub makes them
-- (hub.SearchText: NFKC, case-folded, CJK runs as overlapping pairs),
-- through palaver_search_text, which the store registers with SQLite
-- (sqlite.go). The words are separated by spaces and hold no ASCII
-- punctuation, so the ascii tokenizer keeps them as they are: the index's
-- words are the hub's, and a query's phrases (made of the same words) are
-- split the same way. Every message already sent is indexed again.
DROP TABLE message_search;

CREATE VIRTUAL TABLE message_search USING fts5(
    conversation, summary, body,
    content = '',
    tokenize = 'ascii'
);

INSERT INTO message_search (rowid, conversation, summary, body)
    SELECT rowid, replace(conversation_id, '_', ''), palaver_search_text(summary), palaver_search_text(body)
    FROM messages WHERE status = 'sent';
