package overview

import (
	"context"
	"slices"

	"github.com/palaverhq/palaver/internal/hub"
)

// A project as its page shows it to a member (§8, §11 Projects): who is in
// it, its threads, its items as a board by status, its images, and for the
// owner the access requests waiting; for any member, their own agents not
// yet brought in.

// ItemColumn is one status of the board and its items, latest change first.
type ItemColumn struct {
	Status string
	Items  []*hub.Item
}

// BoardImage is an image of the project and who uploaded it, by handle.
type BoardImage struct {
	*hub.Image
	By string
}

// ProjectBoard is a project's page.
type ProjectBoard struct {
	*hub.ProjectDetail
	Columns []ItemColumn // one per ItemStatuses, in their order
	Images  []BoardImage // newest first
	// Requests are the agents' access requests waiting for the owner
	// (empty for other members).
	Requests []hub.Approval
	// Bringable are the person's own agents that are not in the project.
	Bringable []*hub.Agent
}

// ProjectBoard reads a project's page for one of its members; anyone else
// gets not_found.
func (o *Overview) ProjectBoard(ctx context.Context, u *hub.User, projectID string) (*ProjectBoard, error) {
	d, err := o.hub.Project(ctx, u, projectID)
	if err != nil {
		return nil, err
	}
	b := &ProjectBoard{ProjectDetail: d}
	for _, s := range hub.ItemStatuses {
		col := ItemColumn{Status: s}
		for _, it := range d.Items {
			if it.Status == s {
				col.Items = append(col.Items, it)
			}
		}
		slices.SortStableFunc(col.Items, func(a, b *hub.Item) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
		b.Columns = append(b.Columns, col)
	}
	imgs, err := o.store.Images(ctx, d.Project.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	handles := map[string]string{}
	for _, a := range d.Agents {
		handles[a.AgentID] = a.Handle
	}
	for _, m := range d.Members {
		handles[m.UserID] = "@" + m.Handle
	}
	for _, img := range imgs {
		by, ok := handles[img.UploadedBy]
		if !ok {
			// An agent taken out of the project since.
			if a, err := o.store.AgentByID(ctx, img.UploadedBy); err == nil {
				by = a.Handle()
			}
		}
		b.Images = append(b.Images, BoardImage{Image: img, By: by})
	}
	if d.Access == "owner" {
		as, err := o.hub.Approvals(ctx, u)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if a.Kind == hub.ApprovalProjectAccess && a.Project.ProjectID == d.Project.ID {
				b.Requests = append(b.Requests, a)
			}
		}
	}
	mine, err := o.store.Agents(ctx, u.ID, false)
	if err != nil {
		return nil, hub.AsError(err)
	}
	for _, a := range mine {
		if !slices.ContainsFunc(d.Agents, func(pa hub.ProjectAgent) bool { return pa.AgentID == a.ID }) {
			b.Bringable = append(b.Bringable, a)
		}
	}
	return b, nil
}

// ProjectsPage is the person's projects and the project proposals of their
// agents waiting for them.
type ProjectsPage struct {
	Projects  []*hub.Project
	Proposals []hub.Approval
}

// ProjectsPage reads the list of the person's projects (the home project,
// made on first use, first) with the proposals waiting.
func (o *Overview) ProjectsPage(ctx context.Context, u *hub.User) (*ProjectsPage, error) {
	ps, err := o.hub.Projects(ctx, u)
	if err != nil {
		return nil, err
	}
	p := &ProjectsPage{Projects: ps}
	as, err := o.hub.Approvals(ctx, u)
	if err != nil {
		return nil, err
	}
	for _, a := range as {
		if a.Kind == hub.ApprovalProjectProposal {
			p.Proposals = append(p.Proposals, a)
		}
	}
	return p, nil
}
