-- Authentication from memory (DESIGN.md §17): a server keeps the tokens it
-- resolved, with the number below as it read it first, and trusts them
-- only while the number stands. Every change to what a token resolves to
-- moves it in the transaction that makes the change, whichever replica or
-- process makes it: a token revoked, changed or deleted, an agent or a
-- person changed or deleted. A token's use being recorded (last_used_at
-- alone) does not; a new token needs no move, since nobody can have kept
-- it. The row is locked until the change commits, so a reader never sees
-- the number moved before the change.
CREATE TABLE generations (
    name TEXT PRIMARY KEY,
    n    BIGINT NOT NULL
);
INSERT INTO generations (name, n) VALUES ('auth', 0);

CREATE FUNCTION palaver_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'auth';
    RETURN NULL;
END
$$;

CREATE TRIGGER tokens_auth_changed AFTER UPDATE ON tokens FOR EACH ROW
    WHEN (new.last_used_at IS NOT DISTINCT FROM old.last_used_at) EXECUTE FUNCTION palaver_auth_changed();
CREATE TRIGGER tokens_auth_deleted AFTER DELETE ON tokens FOR EACH STATEMENT EXECUTE FUNCTION palaver_auth_changed();
CREATE TRIGGER agents_auth_changed AFTER UPDATE OR DELETE ON agents FOR EACH STATEMENT EXECUTE FUNCTION palaver_auth_changed();
CREATE TRIGGER users_auth_changed AFTER UPDATE OR DELETE ON users FOR EACH STATEMENT EXECUTE FUNCTION palaver_auth_changed();
