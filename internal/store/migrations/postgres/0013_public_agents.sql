-- Public agents (DESIGN.md §1, §3): an owner may mark an agent public, so
-- anyone may add it to a conversation and speak to it without a grant.
ALTER TABLE agents ADD COLUMN public BOOLEAN NOT NULL DEFAULT FALSE;
