// Package httpx holds the HTTP middleware every face shares: request ids,
// the access log, panic recovery and security headers; and what they
// answer alike: an error's trace id, each error kind's status, the public
// base URL, the client's address behind a proxy, and uploaded bytes sent
// safely.
package httpx

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
)

type requestIDKey struct{}

// RequestID returns the request's id ("" outside a request).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewTrace returns a fresh trace id, "tr_" + 16 hex digits: what an error
// answered by any face and its one log line share, so that a person quoting
// it finds the cause (CONVENTIONS "Errors").
func NewTrace() string { return "tr_" + newID() }

// newID is 16 random hex digits: a request's id (X-Request-Id), and the
// part of a trace id after its prefix.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Wrap applies the shared middleware: a request id (X-Request-Id), security
// headers, panic recovery, a 404 for a path that is not clean (where
// ServeMux would redirect, and a redirect drops a POST or its
// Authorization header at some clients, DESIGN.md §10.1), and one
// access-log line per request at debug level (method, path, status,
// bytes, duration; never a header's value).
func Wrap(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := newID()
		h := w.Header()
		h.Set("X-Request-Id", id)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				log.Error("panic serving request", "request", id, "method", r.Method, "path", r.URL.Path, "panic", p)
				if sw.status == 0 {
					http.Error(sw, "internal error", http.StatusInternalServerError)
				}
			}
			log.Debug("request", "request", id, "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"bytes", sw.bytes, "duration_ms", time.Since(start).Milliseconds())
		}()
		if clean := cleanPath(r.URL.Path); clean != r.URL.Path && r.Method != http.MethodConnect && r.RequestURI != "*" {
			http.Error(sw, "nothing is served at "+r.URL.Path+"; did you mean "+clean+"?", http.StatusNotFound)
			return
		}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

// cleanPath is the path ServeMux would redirect p to: rooted, without
// empty or dot segments, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// BaseURL is the server's public base URL: the configured one, or else
// the one this request reached it by.
func BaseURL(configured string, r *http.Request) string {
	if configured != "" {
		return configured
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// KnownHost reports whether a request's Host header names this server:
// the configured base URL's host (baseHost, "" when none is set), or an
// address or localhost (LiteralHost). A name merely pointed here — DNS
// rebinding, a forged Host — is neither, so it never drives a face nor is
// reflected into a URL the server hands out (§15).
func KnownHost(baseHost, host string) bool {
	return (baseHost != "" && strings.EqualFold(defaultPortless(host), defaultPortless(baseHost))) || LiteralHost(host)
}

// defaultPortless is a host without an explicit default port, :443 or :80,
// which names the same origin as leaving it out (RFC 9110 §4.2).
func defaultPortless(host string) string {
	return strings.TrimSuffix(strings.TrimSuffix(host, ":443"), ":80")
}

// LiteralHost reports whether a Host header names the server by an IP
// address or as localhost (or a name under .localhost): the names a page
// elsewhere cannot make resolve here by DNS rebinding, so a server with no
// configured base URL may build URLs from them.
func LiteralHost(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	name = strings.ToLower(name)
	return name == "localhost" || strings.HasSuffix(name, ".localhost")
}

// WriteBytes sends bytes that people uploaded (a project's images) as
// what they are and nothing else: no sniffing, no scripts, kept only by
// the person's own browser.
func WriteBytes(w http.ResponseWriter, contentType string, data []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=3600")
	w.Write(data)
}

// Attachment sets the headers of a file to download and keep (an
// export's archive): its type, its name to save it under, no sniffing, and
// no copy kept by the browser or anything between.
func Attachment(w http.ResponseWriter, contentType, filename string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "no-store")
}

// ClientAddr is the address of the client a request came from: its peer,
// or, when the peer is a trusted reverse proxy (one on this machine, or in
// trusted), the last address X-Forwarded-For names that is not one.
func ClientAddr(r *http.Request, trusted []netip.Prefix) string {
	isProxy := func(a netip.Addr) bool {
		a = a.Unmap()
		if a.IsLoopback() {
			return true
		}
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap()
	if !isProxy(addr) {
		return addr.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if addr = a.Unmap(); !isProxy(addr) {
			break
		}
	}
	return addr.String()
}

// Status is the HTTP status of each hub error kind, the same for every
// face that answers over HTTP (CONVENTIONS "Errors").
func Status(k hub.Kind) int {
	switch k {
	case hub.KindNotFound:
		return http.StatusNotFound
	case hub.KindInvalid:
		return http.StatusBadRequest
	case hub.KindConflict:
		return http.StatusConflict
	case hub.KindForbidden:
		return http.StatusForbidden
	case hub.KindUnauthenticated:
		return http.StatusUnauthorized
	case hub.KindRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}
