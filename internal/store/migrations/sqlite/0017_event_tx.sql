-- Event order without a global lock (DESIGN.md §6, §13) matters only where
-- several processes commit: on PostgreSQL each event keeps its
-- transaction's id. SQLite's one writer commits in id order, so its events
-- all keep tx 0 and are read in id order as before.
ALTER TABLE events ADD COLUMN tx INTEGER NOT NULL DEFAULT 0;
