package web

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/projects"
	"github.com/palaverhq/palaver/internal/render"
)

// funcs are the templates' helpers: how pages show bodies, times and
// labels. Everything others wrote reaches a page through html/template's
// escaping or the markdown renderer, never as raw HTML.
func (w *Web) funcs() template.FuncMap {
	return template.FuncMap{
		"asset":     func(name string) string { return "/static/" + name + "?v=" + w.static[name].version },
		"body":      messageBody,
		"ago":       func(t time.Time) string { return ago(t, w.hub.Now()) },
		"exact":     exactIn(time.UTC),
		"iso":       func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"kind":      kindLabel,
		"join":      strings.Join,
		"slug":      func(handle string) string { _, s, _ := strings.Cut(handle, "/"); return s },
		"imagePath": projects.ImagePath,
		"hitLink":   hitLink,
		"ask":       question,
	}
}

// messageBody is a message's words as a page shows them: markdown through
// the one renderer (a thread's own project images allowed), anything else
// as text with its line breaks.
func messageBody(m *hub.Message, projectID string) template.HTML {
	if m.Format == hub.FormatMarkdown {
		return render.Markdown(m.Body, render.Options{Image: projects.ImageSource(projectID)})
	}
	return template.HTML(`<p class="plain">` + template.HTMLEscapeString(m.Body) + `</p>`)
}

// ago is a time as people say it at now, e.g. "3 min ago".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + span(-d)
	case d < time.Minute:
		return "just now"
	}
	return span(d) + " ago"
}

func span(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
}

// exactIn is how a page says a time to the second (a title attribute), in
// the reader's time zone.
func exactIn(loc *time.Location) func(time.Time) string {
	return func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format("2006-01-02 15:04:05 MST")
	}
}

// kindLabel names an approval's kind for people.
func kindLabel(kind string) string {
	switch kind {
	case hub.ApprovalHeldMessage:
		return "Message held for review"
	case hub.ApprovalQuestion:
		return "Question"
	case hub.ApprovalGrantRequest:
		return "Grant request"
	case hub.ApprovalInboundAsk:
		return "Asks to come in"
	case hub.ApprovalContactRequest:
		return "Contact request"
	case hub.ApprovalProjectProposal:
		return "Project proposal"
	case hub.ApprovalProjectAccess:
		return "Project access request"
	case hub.ApprovalPermission:
		return "Permission request"
	}
	return kind
}
