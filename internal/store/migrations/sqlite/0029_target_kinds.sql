-- Owner notifications (DESIGN.md §19): what notifies a person is chosen
-- per device or topic. Each target takes the kinds its person had chosen
-- (comma-separated, as notify_prefs kept them), or the defaults — every
-- kind but every message — when they had chosen none; quiet hours stay
-- the person's.
ALTER TABLE notify_targets ADD COLUMN kinds TEXT NOT NULL DEFAULT '';
UPDATE notify_targets SET kinds = COALESCE((SELECT p.kinds FROM notify_prefs p WHERE p.user_id = notify_targets.user_id),
    'question,held,grant,inbound,contact,project,permission,brake,paused');
ALTER TABLE notify_prefs DROP COLUMN kinds;
