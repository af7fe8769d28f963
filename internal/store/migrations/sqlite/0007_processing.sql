-- The processing lifecycle of a delivery (DESIGN.md §5): waiting, then an
-- attempt that started at started_at (processing), then done or failed. A
-- processing attempt older than the server's setting is stuck and comes
-- back first in its agent's inbox.
ALTER TABLE deliveries ADD COLUMN started_at INTEGER;
CREATE INDEX deliveries_processing ON deliveries (agent_id, started_at) WHERE state = 'processing' AND acked_at IS NULL;
