-- Public agents (DESIGN.md §1, §3): an owner may mark an agent public, so
-- anyone may add it to a conversation and speak to it without a grant.
ALTER TABLE agents ADD COLUMN public BOOLEAN NOT NULL DEFAULT FALSE;
-- Every agent's peers list the public ones: few among many, found by a
-- partial index.
CREATE INDEX agents_public ON agents (owner_id) WHERE public AND archived_at IS NULL;
