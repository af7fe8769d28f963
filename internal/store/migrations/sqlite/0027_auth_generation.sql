-- Authentication from memory (DESIGN.md §17): a server keeps the tokens it
-- resolved, with the number below as it read it first, and trusts them
-- only while the number stands. Every change to what a token resolves to
-- moves it in the transaction that makes the change, whichever process
-- makes it (the admin command line, another server): a token revoked,
-- changed or deleted, an agent or a person changed or deleted. A token's
-- use being recorded (last_used_at alone) does not; a new token needs no
-- move, since nobody can have kept it.
CREATE TABLE generations (
    name TEXT PRIMARY KEY,
    n    INTEGER NOT NULL
);
INSERT INTO generations (name, n) VALUES ('auth', 0);

-- The same for the participants of conversations as the writer keeps them
-- for the checks of the sends it writes (DESIGN.md §17 "cached checks"):
-- every change to participants moves it, and every change to agents and
-- users (an agent archived, a handle), which the participants' reads join.
INSERT INTO generations (name, n) VALUES ('participants', 0);
CREATE TRIGGER participants_added AFTER INSERT ON participants BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'participants';
END;
CREATE TRIGGER participants_changed AFTER UPDATE ON participants BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'participants';
END;
CREATE TRIGGER participants_removed AFTER DELETE ON participants BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'participants';
END;

CREATE TRIGGER tokens_auth_changed AFTER UPDATE ON tokens WHEN new.last_used_at IS old.last_used_at BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'auth';
END;
CREATE TRIGGER tokens_auth_deleted AFTER DELETE ON tokens BEGIN
    UPDATE generations SET n = n + 1 WHERE name = 'auth';
END;
CREATE TRIGGER agents_auth_changed AFTER UPDATE ON agents BEGIN
    UPDATE generations SET n = n + 1 WHERE name IN ('auth', 'participants');
END;
CREATE TRIGGER agents_auth_deleted AFTER DELETE ON agents BEGIN
    UPDATE generations SET n = n + 1 WHERE name IN ('auth', 'participants');
END;
CREATE TRIGGER users_auth_changed AFTER UPDATE ON users BEGIN
    UPDATE generations SET n = n + 1 WHERE name IN ('auth', 'participants');
END;
CREATE TRIGGER users_auth_deleted AFTER DELETE ON users BEGIN
    UPDATE generations SET n = n + 1 WHERE name IN ('auth', 'participants');
END;
