-- Event order without a global lock (DESIGN.md §6, §13). Each event keeps
-- the id of the transaction that inserted it, and readers take events in
-- (tx, id) order, only those of transactions older than the oldest one
-- still running: such a transaction has ended, so no event can later
-- appear before one already read, while replicas commit side by side.
-- Events stored before this have tx 0 and keep their id order.
--
-- event_tx_base is added to PostgreSQL's transaction ids so that they keep
-- growing across a dump restored into a fresh cluster, which starts
-- counting transactions again; opening the database raises it when the
-- stored events are ahead of the cluster's counter.
ALTER TABLE events ADD COLUMN tx BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION palaver_event_tx_base() RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT COALESCE((SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'event_tx_base'), 0)
$$;

-- The inserting transaction's id, which assigns one if it has none.
CREATE FUNCTION palaver_event_tx() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$
    SELECT CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT) + palaver_event_tx_base()
$$;

-- Every event of a transaction below this has been committed or rolled
-- back, in the statement's own snapshot.
CREATE FUNCTION palaver_event_horizon() RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT CAST(CAST(pg_snapshot_xmin(pg_current_snapshot()) AS TEXT) AS BIGINT) + palaver_event_tx_base()
$$;

ALTER TABLE events ALTER COLUMN tx SET DEFAULT palaver_event_tx();

DROP INDEX events_recipient;
CREATE INDEX events_recipient ON events (recipient_id, tx, id);
CREATE INDEX events_tx ON events (tx, id);
