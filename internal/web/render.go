// Package web is Palaver's dashboard (DESIGN.md §11): server-rendered pages
// where people sign in, decide what waits for them, read and write in their
// agents' conversations, and manage agents, tokens and contacts. Pages are
// html/template, progressively enhanced with htmx and server-sent events;
// every page and form works with JavaScript off. One route table, handlers
// that decode, make a hub call and return a reply, and one function,
// serveError, that turns errors into a page or a form's message.
package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

// Rendering: the embedded templates and static files, and one page
// written with its layout, flash and content policy.

// asset is a static file served from memory under a name that changes
// with its content, so browsers may keep it for good.
type asset struct {
	contentType string
	data        []byte
	version     string
}

// loadStatic reads static/: the scripts as they are, and the one
// stylesheet, Pico followed by Palaver's own rules.
func (w *Web) loadStatic() error {
	read := func(name string) ([]byte, error) { return fs.ReadFile(files, "static/"+name) }
	add := func(name, contentType string, data []byte) {
		sum := sha256.Sum256(data)
		w.static[name] = asset{contentType: contentType, data: data, version: hex.EncodeToString(sum[:6])}
	}
	for _, name := range []string{"htmx.min.js", "sse.min.js", "palaver.js", "notify.js", "sw.js"} {
		data, err := read(name)
		if err != nil {
			return err
		}
		add(name, "text/javascript; charset=utf-8", data)
	}
	icon, err := read("icon.svg")
	if err != nil {
		return err
	}
	add("icon.svg", "image/svg+xml", icon)
	pico, err := read("pico.min.css")
	if err != nil {
		return err
	}
	own, err := read("palaver.css")
	if err != nil {
		return err
	}
	add("palaver.css", "text/css; charset=utf-8", bytes.Join([][]byte{pico, own}, []byte("\n")))
	return nil
}

// parse makes one template set per page: the layout with that page.
func (w *Web) parse() error {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return err
	}
	layout := template.New("layout.html").Funcs(w.funcs())
	// parts*.html are pieces every page may use (a page's own sections
	// kept apart, such as Settings' for the account).
	if _, err := layout.ParseFS(files, "templates/layout.html", "templates/parts*.html"); err != nil {
		return fmt.Errorf("dashboard templates: %w", err)
	}
	for _, name := range names {
		base := path.Base(name)
		if base == "layout.html" || strings.HasPrefix(base, "parts") {
			continue
		}
		t, err := layout.Clone()
		if err == nil {
			_, err = t.ParseFS(files, name)
		}
		if err != nil {
			return fmt.Errorf("dashboard template %s: %w", base, err)
		}
		w.pages[strings.TrimSuffix(base, ".html")] = t
		if w.parsed[strings.TrimSuffix(base, ".html")], err = t.Clone(); err != nil {
			return err
		}
	}
	return nil
}

// page is the template set of a page for a reader in the time zone zone
// ("" is UTC): the pages as parsed, or for another zone a set made from
// them on its first use (a page set can be cloned only before it is first
// drawn, so parsed keeps copies never drawn), whose times say that zone.
func (w *Web) page(name, zone string) *template.Template {
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil || loc == time.UTC {
		return w.pages[name]
	}
	w.zonedMu.Lock()
	defer w.zonedMu.Unlock()
	key := zone + "\x00" + name
	if t := w.zoned[key]; t != nil {
		return t
	}
	parsed := w.parsed[name]
	if parsed == nil {
		return nil
	}
	t, err := parsed.Clone()
	if err != nil {
		w.log.Error("a page in a time zone", "page", name, "zone", zone, "err", err)
		return w.pages[name]
	}
	t.Funcs(template.FuncMap{"exact": exactIn(loc)})
	w.zoned[key] = t
	return t
}

// view is what every page's template gets.
type view struct {
	User    *hub.User
	Page    string // the page's name, for the navigation
	Notice  string
	Error   string
	Waiting int    // approvals waiting, in the navigation
	Stream  string // the event stream the page listens to
	Path    string
	Data    any
}

// render writes a page: the layout around the page's template.
func (w *Web) render(rw http.ResponseWriter, r *request, code int, page string, data any, f flash) {
	zone := ""
	if r.user != nil {
		zone = r.user.TimeZone
	}
	t := w.page(page, zone)
	if t == nil {
		panic("dashboard: no template " + page)
	}
	// A part of a page fetching itself again (on an event) shows no
	// flash, so it must leave it for the page it belongs to.
	part := r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Boosted") != "true"
	if !part {
		if old := w.takeFlash(rw, r.Request); f == (flash{}) {
			f = old
		}
	}
	v := view{User: r.user, Page: page, Notice: f.Notice, Error: f.Error, Path: r.URL.RequestURI(), Data: data, Stream: "/events/stream"}
	if r.stream != "" {
		v.Stream = r.stream
	}
	if r.user != nil {
		if as, err := w.waiting(r.Context(), r); err == nil {
			v.Waiting = len(as)
		}
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		w.log.Error("rendering a page", "page", page, "err", err)
		http.Error(rw, "the page could not be drawn", http.StatusInternalServerError)
		return
	}
	h := rw.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	policy := contentPolicy
	if p, ok := data.(interface{ formActions() string }); ok && p.formActions() != "" {
		policy = strings.Replace(policy, "form-action 'self'", "form-action 'self' "+p.formActions(), 1)
	}
	h.Set("Content-Security-Policy", policy)
	h.Set("Vary", "Cookie, HX-Request")
	rw.WriteHeader(code)
	rw.Write(buf.Bytes())
}

// contentPolicy lets pages run only the dashboard's own scripts and
// styles: no inline script, no other origin, no framing.
const contentPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// serveStatic serves the embedded scripts and the stylesheet.
func (w *Web) serveStatic(rw http.ResponseWriter, r *http.Request) {
	a, ok := w.static[r.PathValue("name")]
	if !ok {
		http.NotFound(rw, r)
		return
	}
	h := rw.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Content-Length", strconv.Itoa(len(a.data)))
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	rw.Write(a.data)
}
