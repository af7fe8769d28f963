-- What waits for an owner (DESIGN.md §9) is read on every dashboard page,
-- for the count in the navigation; held messages are few among many, so
-- a partial index finds them without reading the whole history.
CREATE INDEX messages_held ON messages (owner_id, created_at) WHERE status = 'held';
