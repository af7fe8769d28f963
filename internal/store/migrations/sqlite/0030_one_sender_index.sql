-- The send writes one index of its sender's messages, not two (DESIGN.md
-- §17): the duplicate brake (§7) looks for the same words among the
-- sender's messages in the conversation since its window began, and
-- messages_sender now carries the words' hash, so that look reads the
-- range of the budget brake's count and compares hashes in the index,
-- reading a message row only for a hash that matches. The writer's kept
-- counts (created_at and hash of each) read the index alone.
DROP INDEX IF EXISTS messages_duplicate;
DROP INDEX IF EXISTS messages_sender;
CREATE INDEX messages_sender ON messages (sender_id, conversation_id, created_at, status, body_hash);
