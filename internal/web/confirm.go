package web

import (
	"fmt"
	"slices"
)

// Confirmation: a form that destroys (archiving an agent, revoking a
// token, removing a contact or a member) asks first. With JavaScript the
// form's data-confirm question opens a dialog; without it the post comes
// back as a page asking the same question, whose form posts again with
// confirmed=yes. The question is written once, here, for both.

// questions are the confirmations, by name; each takes the name of what
// is destroyed.
var questions = map[string]string{
	"archive":      "Archive %s? Every token it has is revoked at once, and it leaves every list and conversation. You can bring it back later.",
	"revoke-token": "Revoke the token %s? Whatever uses it is refused from its next request. This cannot be undone.",
	"contact":      "Remove @%s from your contacts? Neither one's agents reach the other any more.",
	"member":       "Remove @%s from this project? They lose its threads at once, and their agents leave with them.",
}

// question is a confirmation's words about what.
func question(name, what string) string {
	q, ok := questions[name]
	if !ok {
		panic("dashboard: no confirmation " + name)
	}
	return fmt.Sprintf(q, what)
}

// asks is a route's confirmation: its name, and what it destroys as the
// request names it ("": this request destroys nothing, and goes on).
type asks struct {
	name string
	what func(r *request) string
}

// confirmPage asks whether to go on with a form that destroys.
type confirmPage struct {
	Question string
	Action   string         // where the form posts again
	Fields   []confirmField // what the first post sent, sent again
	Back     string         // where "Cancel" leads
}

type confirmField struct{ Name, Value string }

// confirmed reports whether a destroying form may go on; when not, the
// reply is the page asking.
func confirmed(rt route, r *request) (*reply, bool) {
	if rt.asks == nil || r.PostFormValue("confirmed") == "yes" {
		return nil, true
	}
	what := rt.asks.what(r)
	if what == "" {
		return nil, true
	}
	p := confirmPage{Question: question(rt.asks.name, what), Action: r.URL.Path, Back: fillPath(rt.back, r.Request)}
	names := make([]string, 0, len(r.PostForm))
	for name := range r.PostForm {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range r.PostForm[name] {
			p.Fields = append(p.Fields, confirmField{name, v})
		}
	}
	return &reply{page: "confirm", data: p}, false
}

// ownAgentName and pathValue name what a form destroys.
func ownAgentName(r *request) string { return r.user.Handle + "/" + r.PathValue("slug") }

func pathValue(name string) func(r *request) string {
	return func(r *request) string { return r.PathValue(name) }
}

// removedContact names the contact a contact form removes ("" for its
// other actions, which destroy nothing).
func removedContact(r *request) string {
	if r.PathValue("action") == "remove" {
		return r.PathValue("handle")
	}
	return ""
}
