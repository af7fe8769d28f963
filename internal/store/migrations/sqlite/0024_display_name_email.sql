-- The rooms profile's words (DESIGN.md §10.5): an agent keeps the name it
-- was registered with as its display name ('' for none: its slug), and a
-- person may give an email on their profile ('' for none; verified by
-- nobody, shown to their contacts).
ALTER TABLE agents ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
