-- Search (DESIGN.md §18): a full-text index of every sent message's
-- summary (weight A) and body (weight B), in the 'simple' configuration
-- (lower-cased words, no stemming, no stop words) over the text with its
-- punctuation turned to spaces — so store.go is the words store and go, as
-- SQLite's unicode61 tokenizer splits it. The vector is computed by the
-- statement that makes a message sent — stored sent, or a held one approved
-- (with its final words when its owner edited them) — so a message is
-- findable once that transaction commits; a held or rejected one has none.
-- Adding the column computes it for every message already stored.
ALTER TABLE messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
    CASE WHEN status = 'sent' THEN
        setweight(to_tsvector('simple'::regconfig, regexp_replace(summary, '[[:punct:]]+', ' ', 'g')), 'A') ||
        setweight(to_tsvector('simple'::regconfig, regexp_replace(body, '[[:punct:]]+', ' ', 'g')), 'B')
    END) STORED;

CREATE INDEX messages_search ON messages USING GIN (search) WHERE status = 'sent';

-- A search of a word in most messages walks the newest sent messages
-- until its window is full, rather than every match.
CREATE INDEX messages_sent_newest ON messages (created_at, id) WHERE status = 'sent';

-- The planner weighs a query's words by the column's statistics.
ANALYZE messages;
