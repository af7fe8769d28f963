-- Nothing changes here: on SQLite 0028 moves the search index out of the
-- send's commit, while PostgreSQL's search column is written by the send's
-- own statement and merged into its GIN index in bulk (search.go). The
-- number is kept so that both dialects' migrations stay numbered alike.
SELECT 1;
