-- Rooms (DESIGN.md §10.5): a group conversation routed by mention, where a
-- text message is work only for the agents it mentions.
ALTER TABLE conversations ADD COLUMN by_mention BOOLEAN NOT NULL DEFAULT false;
