-- Nothing changes here: on SQLite 0031 takes AUTOINCREMENT and the index
-- on created_at off the events, while PostgreSQL's ids come from their
-- own sequence, never given twice, and its pruning reads events_created
-- (replicas commit events out of id order). The number is kept so that
-- both dialects' migrations stay numbered alike.
SELECT 1;
