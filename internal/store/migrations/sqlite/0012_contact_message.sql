-- A contact request may say why (DESIGN.md §3, §10.5): up to 500 code
-- points, '' for none.
ALTER TABLE contacts ADD COLUMN message TEXT NOT NULL DEFAULT '';
