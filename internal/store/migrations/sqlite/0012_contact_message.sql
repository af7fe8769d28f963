-- A contact request may say why (DESIGN.md §3, §10.5): up to 500 code
-- points, '' for none. An agent lists its own requests to its owner for
-- reach, whatever their status, by agent.
ALTER TABLE contacts ADD COLUMN message TEXT NOT NULL DEFAULT '';
CREATE INDEX grant_requests_agent ON grant_requests (agent_id, created_at);
