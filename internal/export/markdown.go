package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/render"
)

// export.md: the same export for people to read, as Markdown source. Each
// message is a heading — its seq, its sender and session, who stands
// behind it ("AI agent for @alice", §4) and its time — then its badges
// (an authority other than plain human or agent, an event post's kind,
// whom it is for), then its words as a quote: a markdown post as written
// but for what the dashboard would not show (its raw HTML and links to
// javascript: and the like made text, images other than its project's own
// made plain links), plain text escaped so that it shows as written
// (render.Source, render.Escape). An edited message's original words
// follow it, for the owner who edited them. Everything written by someone
// else is escaped the same way, so no reader of the file runs anything in
// it or loads anything from elsewhere when it is opened.

// when is how export.md gives a time.
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// oneLine is untrusted text for a heading or a list item: its lines run
// together, escaped.
func oneLine(s string) string {
	return render.Escape(strings.Join(strings.Fields(s), " "))
}

// md writes export.md; the first error of the writer is kept.
type md struct {
	w      *bufio.Writer
	e      *Export
	images map[string]string // a project image's path in posts → its file in the archive
}

func (m *md) f(format string, args ...any) { fmt.Fprintf(m.w, format, args...) }

// writeMarkdown writes export.md of e.
func writeMarkdown(w io.Writer, e *Export) error {
	m := &md{w: bufio.NewWriter(w), e: e, images: map[string]string{}}
	if pe := e.Project; pe != nil {
		for _, img := range pe.Images {
			m.images[projects.ImagePath(pe.Project.ID, img.ID)] = ImageFile(img)
		}
		m.project(pe)
		if len(e.Conversations) > 0 {
			m.f("\n## Threads\n")
		}
		for _, c := range e.Conversations {
			m.conversation(c, 3)
		}
	} else {
		for _, c := range e.Conversations {
			m.conversation(c, 1)
		}
	}
	return m.w.Flush()
}

func (m *md) exported(what string) {
	m.f("Exported from Palaver by @%s on %s: %s. Each message says who wrote it and who stands behind it, as the server attested; `export.json` holds every field.\n",
		m.e.By.Handle, when(m.e.At), what)
}

func (m *md) handle(id string) string {
	if h := m.e.Names[id]; h != "" {
		return h
	}
	return id
}

// person is how a principal is named: @alice for a person, alice/planner
// for an agent.
func person(kind, handle string) string {
	if kind == hub.PrincipalAgent || strings.Contains(handle, "/") {
		return handle
	}
	return "@" + handle
}

func (m *md) project(pe *ProjectExport) {
	p := pe.Project
	m.f("# Project: %s\n\n", oneLine(p.Name))
	m.exported("the project with its people, agents, items, images and threads")
	m.f("\n- Id: `%s`\n- Owner: @%s\n- Created: %s\n", p.ID, m.handle(p.OwnerID), when(p.CreatedAt))
	if p.Home {
		m.f("- The home project of @%s\n", m.handle(p.OwnerID))
	}
	if p.AgentCap != "" {
		m.f("- Every agent capped at: %s\n", p.AgentCap)
	}
	if !p.ArchivedAt.IsZero() {
		m.f("- Archived: %s\n", when(p.ArchivedAt))
	}
	if p.Description != "" {
		m.f("\n%s\n", render.Escape(p.Description))
	}

	m.f("\n## People and agents\n\n")
	for _, mem := range pe.Members {
		role := "member"
		if mem.UserID == p.OwnerID {
			role = "owner"
		}
		name := ""
		if mem.Name != "" {
			name = " (" + oneLine(mem.Name) + ")"
		}
		m.f("- @%s%s — %s, since %s\n", mem.Handle, name, role, when(mem.AddedAt))
	}
	for _, a := range pe.Agents {
		review := ""
		if a.Review {
			review = ", its sends held for review"
		}
		m.f("- %s — AI agent for @%s — %s%s, since %s\n", a.Handle, m.handle(a.OwnerID), a.Access, review, when(a.AddedAt))
	}

	if len(pe.Items) > 0 {
		m.f("\n## Items\n")
	}
	for _, iv := range pe.Items {
		it := iv.Item
		m.f("\n### [%s] %s: %s\n\n", it.Status, it.Kind, oneLine(it.Title))
		m.f("`%s` · created %s · updated %s", it.ID, when(it.CreatedAt), when(it.UpdatedAt))
		if iv.ConversationID != "" {
			m.f(" · its thread `%s`", iv.ConversationID)
		}
		m.f("\n")
		if it.URL != "" {
			m.f("\nURL: %s\n", render.Escape(it.URL))
		}
		if it.Note != "" {
			m.f("\n%s\n", quote(render.Escape(it.Note)))
		}
		if len(iv.History) > 0 {
			m.f("\nHistory:\n\n")
		}
		for _, c := range iv.History {
			var fields []string
			for _, k := range []string{"kind", "title", "status", "note", "url"} {
				if v, ok := c.Changes[k]; ok {
					fields = append(fields, k+" "+oneLine(fmt.Sprintf("%q", v)))
				}
			}
			for k, v := range c.Changes { // any field not named above
				if !strings.Contains(" kind title status note url ", " "+k+" ") {
					fields = append(fields, oneLine(k)+" "+oneLine(fmt.Sprintf("%q", v)))
				}
			}
			m.f("- %s — %s%s: %s\n", when(c.At), person("", c.ByHandle), session(c.Instance), strings.Join(fields, ", "))
		}
	}

	if len(pe.Images) > 0 {
		m.f("\n## Images\n\n")
	}
	for _, img := range pe.Images {
		alt := img.Alt
		if alt == "" {
			alt = img.Filename
		}
		filename := ""
		if img.Filename != "" {
			filename = " " + oneLine(img.Filename) + " —"
		}
		m.f("- ![%s](%s)%s %s, %d bytes, uploaded by %s%s on %s\n", oneLine(alt), ImageFile(img), filename, img.MIME, img.Size,
			m.handle(img.UploadedBy), session(img.Instance), when(img.CreatedAt))
	}
}

// session names the session something came from ("" for none).
func session(instance string) string {
	if instance == "" {
		return ""
	}
	return " (session " + render.Escape(instance) + ")"
}

// conversation writes one conversation with its heading at level.
func (m *md) conversation(ce *ConversationExport, level int) {
	c := ce.Conversation
	h := strings.Repeat("#", level)
	sub := strings.Repeat("#", level+1)
	kind := c.Kind
	switch {
	case c.ByMention:
		kind = "room"
	case c.Kind == hub.KindThread:
		kind = "thread"
	}
	title := oneLine(c.Title)
	if title == "" {
		var names []string
		for _, p := range ce.Participants {
			names = append(names, person(p.Kind, p.Handle))
		}
		title = strings.Join(names, ", ")
	}
	m.f("\n%s %s%s: %s\n\n", h, strings.ToUpper(kind[:1]), kind[1:], title)
	if level == 1 {
		m.exported("the conversation with its whole history")
		m.f("\n")
	}
	m.f("- Id: `%s`\n- Status: %s\n- Started by %s on %s\n", c.ID, c.State(), person("", m.handle(c.CreatorID)), when(c.CreatedAt))
	if c.State() == hub.StatusPaused {
		m.f("- Paused: %s\n", oneLine(c.PausedReason))
	}
	if c.Goal != "" {
		m.f("- Goal: %s\n", oneLine(c.Goal))
	}
	if c.ProjectID != "" && level == 1 {
		m.f("- Project: `%s`\n", c.ProjectID)
	}
	m.f("\n%s Participants\n\n", sub)
	for _, p := range ce.Participants {
		behind := ""
		if p.Kind == hub.PrincipalAgent {
			behind = " — AI agent for @" + m.handle(p.OwnerID)
		}
		m.f("- %s%s — %s, since %s\n", person(p.Kind, p.Handle), behind, p.Role, when(p.JoinedAt))
	}
	m.f("\n%s Messages\n", sub)
	if len(ce.Messages) == 0 {
		m.f("\nNo messages.\n")
	}
	for _, msg := range ce.Messages {
		m.message(msg, c.ProjectID, level+2)
	}
	if len(ce.Reads) > 0 {
		m.f("\n%s Read by\n\n", sub)
	}
	for _, r := range ce.Reads {
		m.f("- %s%s: up to #%d, %s\n", person("", r.Handle), session(r.Instance), r.LastReadSeq, when(r.UpdatedAt))
	}
}

// message writes one message of a conversation of projectID with its
// heading at level.
func (m *md) message(msg *hub.Message, projectID string, level int) {
	p := msg.Provenance()
	m.f("\n%s #%d · %s%s", strings.Repeat("#", min(level, 6)), msg.Seq, person(msg.SenderKind, msg.SenderHandle), session(msg.SenderInstance))
	if p.AI {
		m.f(" · %s", p.Label())
	}
	m.f(" · %s\n\n", when(msg.CreatedAt))
	var badges []string
	if p.Authority != hub.AuthorityAgent && p.Authority != hub.AuthorityHuman {
		badges = append(badges, "`"+p.Authority+"`")
	}
	if msg.Kind != hub.MessageText {
		badges = append(badges, "`"+msg.Kind+"`")
	}
	if msg.ReplyToSeq > 0 {
		badges = append(badges, fmt.Sprintf("reply to #%d", msg.ReplyToSeq))
	}
	if len(msg.Mentions) > 0 {
		var names []string
		for _, h := range msg.Mentions {
			names = append(names, person("", h))
		}
		badges = append(badges, "for "+strings.Join(names, ", "))
	}
	if msg.ToInstance != "" {
		badges = append(badges, "to session "+render.Escape(msg.ToInstance))
	}
	if msg.NoReply {
		badges = append(badges, "a notice: no reply")
	}
	if msg.Authority == hub.AuthorityApproved || msg.Authority == hub.AuthorityEdited {
		badges = append(badges, fmt.Sprintf("let go by @%s on %s", m.handle(msg.DecidedBy), when(msg.DecidedAt)))
	}
	if len(badges) > 0 {
		m.f("%s\n\n", strings.Join(badges, " · "))
	}
	if msg.Summary != "" {
		m.f("Summary: %s\n\n", oneLine(msg.Summary))
	}
	m.f("%s\n", quote(m.words(msg.Body, msg.Format, projectID)))
	if len(msg.Metadata) > 0 {
		m.f("\n%s\n", fenced(string(msg.Metadata), "json"))
	}
	if msg.OriginalBody != "" {
		m.f("\nThe agent's own words, before @%s edited them:\n\n%s\n", m.handle(msg.DecidedBy), quote(m.words(msg.OriginalBody, msg.Format, projectID)))
	}
}

// words is a body of a message in a conversation of projectID ("" for
// none) as markdown source: a markdown post as written but for what the
// dashboard would not show of it (render.Source: raw HTML and links to
// javascript: and its kind made text, images other than the project's own
// made plain links), the project's images pointing at their files in the
// archive; plain text escaped.
func (m *md) words(body, format, projectID string) string {
	if format != hub.FormatMarkdown {
		return render.Escape(body)
	}
	src := render.Source(body, render.Options{Image: projects.ImageSource(projectID)})
	for path, file := range m.images {
		src = strings.ReplaceAll(src, "("+path+")", "("+file+")")
	}
	return src
}

// quote makes markdown source a block quote, line by line.
func quote(src string) string {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}

// fenced is text as a fenced code block, its fence longer than any run of
// backticks in it.
func fenced(text, info string) string {
	run, longest := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + info + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}
