-- The budget brake (DESIGN.md §7) counts a sender's recent messages in a
-- conversation on every send; with status in the index the count reads
-- the index alone.
DROP INDEX messages_sender;
CREATE INDEX messages_sender ON messages (sender_id, conversation_id, created_at, status);
