// Package web is Palaver's dashboard (DESIGN.md §11): server-rendered pages
// where people sign in, decide what waits for them, read and write in their
// agents' conversations, and manage agents, tokens and contacts. Pages are
// html/template, progressively enhanced with htmx and server-sent events;
// every page and form works with JavaScript off. One route table, handlers
// that decode, make a hub call and return a reply, and one function,
// serveError, that turns errors into a page or a form's message.
package web

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
)

// Errors and notices: the dashboard's one translation of errors
// (serveError), and the flash cookie that carries a notice across a
// redirect.

// serveError is the dashboard's one translation of errors (CONVENTIONS
// "Errors"). Not signed in: to the sign-in page (or first-run setup), and
// back here after. A form shown again: that page with the message. A
// failed form with a page to go back to: there, with the message once.
// Anything else: an error page with the kind's status. Internal errors
// show only a trace id; the cause goes to the log.
func (w *Web) serveError(rw http.ResponseWriter, r *request, err error, back string) {
	var ref *hub.Refusal
	e := &hub.Error{Kind: hub.KindConflict}
	if errors.As(err, &ref) {
		e.Msg = ref.Reason // a placeholder's words are said below, as an error's
	} else {
		e = hub.AsError(err)
	}
	var ag *again
	errors.As(err, &ag)
	if e.Kind == hub.KindUnauthenticated && r.user == nil && ag == nil {
		w.toSignIn(rw, r)
		return
	}
	msg := e.Text(nil, pageWay)
	if e.Kind == hub.KindInternal {
		trace := httpx.NewTrace()
		w.log.Error("dashboard error", "trace", trace, "route", r.Pattern, "err", err)
		msg = "something went wrong on the server (trace " + trace + "); try again"
	} else {
		w.log.Info("dashboard refused", "route", r.Pattern, "code", e.WireCode(), "message", e.Text(nil, nil))
	}
	if retry, ok := e.Details["retry_after_s"]; ok {
		rw.Header().Set("Retry-After", fmt.Sprint(retry))
	}
	switch {
	case ag != nil:
		w.render(rw, r, httpx.Status(e.Kind), ag.page, ag.data, flash{Error: msg})
	case r.Method != http.MethodGet && back != "":
		w.setFlash(rw, flash{Error: msg})
		http.Redirect(rw, r.Request, back, http.StatusSeeOther)
	default:
		w.render(rw, r, httpx.Status(e.Kind), "error", map[string]any{"Status": httpx.Status(e.Kind), "Code": e.WireCode()}, flash{Error: msg})
	}
}

// pageWay is the dashboard's way to do what a hint names (hub.Hint): the
// page where it is done.
func pageWay(a hub.Action) string {
	switch a.Name {
	case hub.ActionApproveContact:
		return "on their Contacts page"
	case hub.ActionListApprovals:
		return "on the Approvals page"
	case hub.ActionListTokens:
		return "on each agent's page, and yours under Settings"
	case hub.ActionMintPersonToken:
		return "under Settings"
	case hub.ActionMintAgentToken:
		return "on the agent's page"
	case hub.ActionCreatePerson:
		return "by inviting them under Settings"
	}
	return "from the menu"
}

// toSignIn sends someone not signed in to sign in, or to make the first
// account when nobody exists yet; a page they asked for is where they
// land after.
func (w *Web) toSignIn(rw http.ResponseWriter, r *request) {
	if need, err := w.accounts.NeedsSetup(r.Context()); err == nil && need {
		http.Redirect(rw, r.Request, "/setup", http.StatusSeeOther)
		return
	}
	to := "/signin"
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		to += "?next=" + url.QueryEscape(r.URL.RequestURI())
	}
	http.Redirect(rw, r.Request, to, http.StatusSeeOther)
}

// flash is a message shown once on the next page, kept in a short cookie
// across the redirect after a form.
type flash struct {
	Notice string `json:"n,omitempty"`
	Error  string `json:"e,omitempty"`
}

// flashCookie is the flash's cookie; over https it takes the __Host-
// prefix, so another host cannot plant a message.
func (w *Web) flashCookie() string {
	if w.secure {
		return "__Host-palaver_flash"
	}
	return "palaver_flash"
}

// maxFlash bounds a flash's message, so its cookie stays well under what
// browsers keep.
const maxFlash = 500

func (w *Web) setFlash(rw http.ResponseWriter, f flash) {
	f.Notice, f.Error = hub.Preview(f.Notice, maxFlash), hub.Preview(f.Error, maxFlash)
	b, _ := json.Marshal(f)
	http.SetCookie(rw, &http.Cookie{Name: w.flashCookie(), Value: base64.RawURLEncoding.EncodeToString(b), Path: "/",
		MaxAge: 60, HttpOnly: true, Secure: w.secure, SameSite: http.SameSiteLaxMode})
}

// takeFlash reads the flash left by the last form, and clears it.
func (w *Web) takeFlash(rw http.ResponseWriter, r *http.Request) flash {
	var f flash
	c, err := r.Cookie(w.flashCookie())
	if err != nil {
		return f
	}
	http.SetCookie(rw, &http.Cookie{Name: w.flashCookie(), Path: "/", MaxAge: -1, HttpOnly: true, Secure: w.secure, SameSite: http.SameSiteLaxMode})
	if b, err := base64.RawURLEncoding.DecodeString(c.Value); err == nil {
		json.Unmarshal(b, &f)
	}
	return f
}
