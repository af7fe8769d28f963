-- A refresh token used once keeps, for a short grace, the tokens it was
-- rotated into, sealed with a key only the refresh token itself gives
-- (DESIGN.md §10.6): a client that refreshes twice at once gets the same
-- new tokens, and the server keeps no usable secret.
ALTER TABLE tokens ADD COLUMN successor BYTEA;
