-- Search matches text that reads the same (DESIGN.md §18): the search
-- column holds each summary's (weight A) and body's (weight B) search
-- words as the hub makes them (hub.SearchText: NFKC, case-folded, CJK runs
-- as overlapping pairs), in the 'simple' configuration. PostgreSQL cannot
-- compute them, so the column is no longer generated: the statement that
-- makes a message sent — stored sent, or a held one approved — writes it
-- from the words the store hands it (messages.go). The messages already
-- sent are indexed again by the step that follows this migration
-- (reindexSearch in postgres.go), in the same transaction.
DROP INDEX messages_search;
ALTER TABLE messages DROP COLUMN search;
ALTER TABLE messages ADD COLUMN search tsvector;
CREATE INDEX messages_search ON messages USING GIN (search) WHERE status = 'sent';
