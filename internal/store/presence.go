package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Presence (§19): who listens, replica by replica, and when agents and
// their sessions were last seen.

// inArgs is the placeholders and arguments of an IN list of ids.
func inArgs(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(?" + strings.Repeat(", ?", len(ids)-1) + ")", args
}

func (d queries) Listeners(ctx context.Context, principalIDs []string, since time.Time) ([]hub.Listener, error) {
	if len(principalIDs) == 0 {
		return nil, nil
	}
	in, args := inArgs(principalIDs)
	return queryAll(ctx, d.q, "listeners", func(row scanner) (hub.Listener, error) {
		var l hub.Listener
		var began, ends sql.NullInt64
		err := row.Scan(&l.PrincipalID, &l.Instance, &l.Replica, &began, &ends)
		l.Since, l.Until = fromMS(began), fromMS(ends)
		return l, err
	}, `SELECT principal_id, instance, replica, since, ends_at FROM listeners
		WHERE principal_id IN `+in+` AND ends_at > ? ORDER BY principal_id, instance, replica`, append(args, since.UnixMilli())...)
}

func (d queries) Sightings(ctx context.Context, agentIDs []string) ([]hub.Sighting, error) {
	if len(agentIDs) == 0 {
		return nil, nil
	}
	in, args := inArgs(agentIDs)
	return queryAll(ctx, d.q, "sightings", func(row scanner) (hub.Sighting, error) {
		var s hub.Sighting
		var seen sql.NullInt64
		err := row.Scan(&s.AgentID, &s.Instance, &seen)
		s.LastSeen = fromMS(seen)
		return s, err
	}, `SELECT agent_id, name, last_seen_at FROM instances WHERE agent_id IN `+in+`
		UNION ALL
		SELECT agent_id, '', MAX(last_used_at) FROM tokens WHERE agent_id IN `+in+` AND last_used_at IS NOT NULL GROUP BY agent_id
		ORDER BY 1, 2`, append(args, args...)...)
}

func (d queries) PutListener(ctx context.Context, l *hub.Listener) error {
	return d.exec(ctx, "put listener", `INSERT INTO listeners (principal_id, instance, replica, since, ends_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (principal_id, instance, replica) DO UPDATE SET since = excluded.since, ends_at = excluded.ends_at`,
		l.PrincipalID, l.Instance, l.Replica, l.Since.UnixMilli(), l.Until.UnixMilli())
}

func (d queries) DeleteListeners(ctx context.Context, before time.Time) error {
	return d.exec(ctx, "delete listeners", `DELETE FROM listeners WHERE ends_at < ?`, before.UnixMilli())
}
