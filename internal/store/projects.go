package store

import (
	"context"
	"database/sql"

	"github.com/palaverhq/palaver/internal/hub"
)

// Projects (§8): the project rows, their members and agents, and agents'
// proposals and access requests.

const projectCols = `p.id, p.owner_id, u.handle, p.name, p.description, p.agent_cap, p.home, p.archived_at, p.created_at, p.updated_at`
const projectFrom = ` FROM projects p JOIN users u ON u.id = p.owner_id`

func scanProject(row scanner) (*hub.Project, error) {
	var p hub.Project
	var archived, created, updated sql.NullInt64
	if err := row.Scan(&p.ID, &p.OwnerID, &p.OwnerHandle, &p.Name, &p.Description, &p.AgentCap, &p.Home, &archived, &created, &updated); err != nil {
		return nil, err
	}
	p.ArchivedAt, p.CreatedAt, p.UpdatedAt = fromMS(archived), fromMS(created), fromMS(updated)
	return &p, nil
}

func (d queries) Project(ctx context.Context, id string) (*hub.Project, error) {
	p, err := scanProject(d.q.QueryRowContext(ctx, `SELECT `+projectCols+projectFrom+` WHERE p.id = ?`, id))
	return p, dbErr("project", err)
}

func (d queries) ProjectsOf(ctx context.Context, principalID string) ([]*hub.Project, error) {
	return queryAll(ctx, d.q, "projects of", scanProject, `SELECT `+projectCols+projectFrom+` WHERE p.archived_at IS NULL AND p.id IN
		(SELECT project_id FROM project_members WHERE user_id = ? UNION SELECT project_id FROM project_agents WHERE agent_id = ?)
		ORDER BY p.home DESC, p.created_at, p.id`, principalID, principalID)
}

func (d queries) LockProject(ctx context.Context, id string) error {
	if d.dialect.lockProject == "" {
		return nil
	}
	return d.exec(ctx, "lock project", d.dialect.lockProject, id)
}

func (d queries) InsertProject(ctx context.Context, p *hub.Project) error {
	return d.exec(ctx, "insert project", `INSERT INTO projects (id, owner_id, name, description, agent_cap, home, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.OwnerID, p.Name, p.Description, p.AgentCap, p.Home, ms(p.CreatedAt), ms(p.UpdatedAt))
}

func (d queries) UpdateProject(ctx context.Context, p *hub.Project) error {
	return d.execOne(ctx, "update project", `UPDATE projects SET name = ?, description = ?, agent_cap = ?, archived_at = ?, updated_at = ? WHERE id = ?`,
		p.Name, p.Description, p.AgentCap, ms(p.ArchivedAt), ms(p.UpdatedAt), p.ID)
}

func (d queries) ProjectMembers(ctx context.Context, projectID string) ([]hub.ProjectMember, error) {
	return queryAll(ctx, d.q, "project members", func(row scanner) (hub.ProjectMember, error) {
		m := hub.ProjectMember{ProjectID: projectID}
		var added sql.NullInt64
		err := row.Scan(&m.UserID, &m.Handle, &m.Name, &added)
		m.AddedAt = fromMS(added)
		return m, err
	}, `SELECT m.user_id, u.handle, u.name, m.added_at FROM project_members m JOIN users u ON u.id = m.user_id
		WHERE m.project_id = ? ORDER BY m.added_at, u.handle`, projectID)
}

func (d queries) PutProjectMember(ctx context.Context, m *hub.ProjectMember) error {
	return d.exec(ctx, "put project member", `INSERT INTO project_members (project_id, user_id, added_at) VALUES (?, ?, ?)
		ON CONFLICT (project_id, user_id) DO NOTHING`, m.ProjectID, m.UserID, ms(m.AddedAt))
}

func (d queries) DeleteProjectMember(ctx context.Context, projectID, userID string) error {
	return d.exec(ctx, "delete project member", `DELETE FROM project_members WHERE project_id = ? AND user_id = ?`, projectID, userID)
}

const projectAgentCols = `pa.project_id, pa.agent_id, ou.handle || '/' || a.slug, a.owner_id, pa.access, pa.review, a.archived_at IS NOT NULL, pa.added_at`
const projectAgentFrom = ` FROM project_agents pa JOIN agents a ON a.id = pa.agent_id JOIN users ou ON ou.id = a.owner_id`

func scanProjectAgent(row scanner) (hub.ProjectAgent, error) {
	var pa hub.ProjectAgent
	var added sql.NullInt64
	err := row.Scan(&pa.ProjectID, &pa.AgentID, &pa.Handle, &pa.OwnerID, &pa.Access, &pa.Review, &pa.Archived, &added)
	pa.AddedAt = fromMS(added)
	return pa, err
}

func (d queries) ProjectAgents(ctx context.Context, projectID string) ([]hub.ProjectAgent, error) {
	return queryAll(ctx, d.q, "project agents", scanProjectAgent, `SELECT `+projectAgentCols+projectAgentFrom+`
		WHERE pa.project_id = ? ORDER BY pa.added_at, 3`, projectID)
}

func (d queries) ProjectAgent(ctx context.Context, projectID, agentID string) (*hub.ProjectAgent, error) {
	pa, err := scanProjectAgent(d.q.QueryRowContext(ctx, `SELECT `+projectAgentCols+projectAgentFrom+` WHERE pa.project_id = ? AND pa.agent_id = ?`, projectID, agentID))
	if err != nil {
		return nil, dbErr("project agent", err)
	}
	return &pa, nil
}

func (d queries) PutProjectAgent(ctx context.Context, pa *hub.ProjectAgent) error {
	return d.exec(ctx, "put project agent", `INSERT INTO project_agents (project_id, agent_id, access, review, added_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (project_id, agent_id) DO UPDATE SET access = excluded.access, review = excluded.review`,
		pa.ProjectID, pa.AgentID, pa.Access, pa.Review, ms(pa.AddedAt))
}

func (d queries) DeleteProjectAgent(ctx context.Context, projectID, agentID string) error {
	return d.exec(ctx, "delete project agent", `DELETE FROM project_agents WHERE project_id = ? AND agent_id = ?`, projectID, agentID)
}

const projectRequestCols = `r.id, r.kind, r.agent_id, ou.handle || '/' || a.slug, r.owner_id, r.project_id, r.name, r.description,
	r.reason, r.instance, r.status, r.decided_by, r.created_at, r.decided_at`
const projectRequestFrom = ` FROM project_requests r JOIN agents a ON a.id = r.agent_id JOIN users ou ON ou.id = a.owner_id`

func scanProjectRequest(row scanner) (*hub.ProjectRequest, error) {
	var r hub.ProjectRequest
	var created, decided sql.NullInt64
	if err := row.Scan(&r.ID, &r.Kind, &r.AgentID, &r.AgentHandle, &r.OwnerID, &r.ProjectID, &r.Name, &r.Description,
		&r.Reason, &r.Instance, &r.Status, &r.DecidedBy, &created, &decided); err != nil {
		return nil, err
	}
	r.CreatedAt, r.DecidedAt = fromMS(created), fromMS(decided)
	return &r, nil
}

func (d queries) ProjectRequest(ctx context.Context, id string) (*hub.ProjectRequest, error) {
	r, err := scanProjectRequest(d.q.QueryRowContext(ctx, `SELECT `+projectRequestCols+projectRequestFrom+` WHERE r.id = ?`, id))
	return r, dbErr("project request", err)
}

func (d queries) PendingProjectRequests(ctx context.Context, ownerID string) ([]*hub.ProjectRequest, error) {
	return queryAll(ctx, d.q, "pending project requests", scanProjectRequest, `SELECT `+projectRequestCols+projectRequestFrom+`
		WHERE r.owner_id = ? AND r.status = 'pending' ORDER BY r.created_at, r.id`, ownerID)
}

func (d queries) InsertProjectRequest(ctx context.Context, r *hub.ProjectRequest) error {
	return d.exec(ctx, "insert project request", `INSERT INTO project_requests (id, kind, agent_id, owner_id, project_id, name, description,
		reason, instance, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Kind, r.AgentID, r.OwnerID, r.ProjectID, r.Name, r.Description, r.Reason, r.Instance, r.Status, ms(r.CreatedAt))
}

func (d queries) DecideProjectRequest(ctx context.Context, r *hub.ProjectRequest) error {
	return d.execOne(ctx, "decide project request", `UPDATE project_requests SET status = ?, project_id = ?, decided_by = ?, decided_at = ?
		WHERE id = ? AND status = 'pending'`, r.Status, r.ProjectID, r.DecidedBy, ms(r.DecidedAt), r.ID)
}
