// Package push delivers owner notifications (DESIGN.md §19, "Owner
// notifications") the two standard ways a person is reached away from the
// dashboard: Web Push to a browser's subscription (RFC 8030 delivery,
// RFC 8291 encryption, RFC 8292 VAPID; webpush.go) and a publish to an
// ntfy topic (ntfy.go). What notifies whom and when — a notification
// queued with the events it tells of, held past quiet hours, coalesced
// into digests — is the hub's, decided in the events' transaction; the
// people's devices, topics and preferences, the server's VAPID key pair
// and the outbox that sends what the hub queued, with its retries and
// removing a subscription that is gone, are Notices' (notices.go,
// outbox.go), as for webhooks (§18, internal/webhook). The Sender only
// delivers one notification to one place and says how it went. Every
// call goes through the egress client: https only, to no address the
// caller's allow refuses, no redirects, a timeout, and a bounded read of
// the answer.
package push

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/egress"
)

// Timeout bounds one call, from connecting to the answer's last byte: a
// backstop under the caller's own deadline.
const Timeout = 10 * time.Second

// maxAnswer is how much of an answer's body is read (and dropped), so the
// connection ends cleanly without a receiver making the server read more.
const maxAnswer = 64 << 10

// Priority is how urgently a notification asks for attention (§19): Web
// Push's Urgency header and ntfy's priority are made from it.
type Priority string

// The priorities; "" is PriorityNormal.
const (
	PriorityLow    Priority = "low"    // Web Push urgency low, ntfy 2
	PriorityNormal Priority = "normal" // Web Push urgency normal, ntfy 3 (its default)
	PriorityHigh   Priority = "high"   // Web Push urgency high, ntfy 4
)

// Notification is what one notification says (§19): a title, the summary
// and a link — never a body the person would have to trust. Its JSON is
// the Web Push payload the dashboard's service worker reads.
type Notification struct {
	// ID names what the notification is about, one per item (a question,
	// an approval): a later notification with the same ID replaces an
	// earlier one — as Web Push's Topic while the push service still
	// holds it, as the service worker's tag once shown, and as ntfy's
	// sequence_id (ntfy 2.16 and newer; older servers show both).
	// Empty: nothing is replaced.
	ID    string `json:"id,omitempty"`
	Title string `json:"title"`
	// Summary is the line under the title: a message's summary or a
	// question's words, already cut to size by the hub.
	Summary  string   `json:"summary,omitempty"`
	Link     string   `json:"link,omitempty"` // opened on a click: an absolute http(s) URL
	Priority Priority `json:"priority"`
	// Tags are short words (ntfy shows one that names an emoji as that
	// emoji); no commas.
	Tags []string `json:"tags,omitempty"`
	// Action is one button, for permission requests and questions.
	Action *Action `json:"action,omitempty"`
}

// Action is a notification's button: its label, and the URL it opens.
type Action struct {
	Label string `json:"label"`
	URL   string `json:"url"` // an absolute http(s) URL
}

// Check says what is wrong with n, or nil.
func (n *Notification) Check() error {
	if strings.TrimSpace(n.Title) == "" {
		return errors.New("a notification needs a title")
	}
	switch n.Priority {
	case "", PriorityLow, PriorityNormal, PriorityHigh:
	default:
		return fmt.Errorf("a notification's priority is low, normal or high, not %q", n.Priority)
	}
	if n.Link != "" {
		if err := checkLink(n.Link); err != nil {
			return fmt.Errorf("its link: %w", err)
		}
	}
	for _, t := range n.Tags {
		if t == "" || strings.ContainsAny(t, ",\r\n") {
			return fmt.Errorf("a notification's tag is a word without commas, not %q", t)
		}
	}
	if a := n.Action; a != nil {
		if strings.TrimSpace(a.Label) == "" {
			return errors.New("a notification's action needs a label")
		}
		if err := checkLink(a.URL); err != nil {
			return fmt.Errorf("its action's URL: %w", err)
		}
	}
	return nil
}

// priority is n's priority with "" read as normal.
func (n *Notification) priority() Priority {
	if n.Priority == "" {
		return PriorityNormal
	}
	return n.Priority
}

func checkLink(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return nil
}

// key is id as Web Push's Topic and ntfy's sequence_id may carry it: at
// most 32 characters of the URL-safe base64 alphabet (RFC 8030 §5.4).
// The hub's ids already are; any other is replaced by a digest of it, so
// equal ids still give equal keys.
func key(id string) string {
	ok := len(id) <= 32
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if ok {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:])[:32]
}

// Result is how a call went, in the shape of a webhook call's.
type Result struct {
	Status   int   // the answer's HTTP status; 0 when none came
	Err      error // why no answer came, or why nothing was sent
	Duration time.Duration
	// Gone says the push service answered that the subscription no
	// longer exists (404 or 410, RFC 8030 §7.3 and RFC 8292 §4): remove
	// it rather than try again. Never set for ntfy.
	Gone bool
}

// Delivered reports whether the notification was taken: a 2xx answer.
func (r Result) Delivered() bool { return r.Err == nil && r.Status >= 200 && r.Status < 300 }

// Options configure New.
type Options struct {
	// RootCAs are the certificates trusted for push services and ntfy
	// servers; nil: the system's.
	RootCAs *x509.CertPool
	// Resolver looks up hosts when calling; nil: the system's.
	Resolver egress.Resolver
}

// Sender delivers notifications (§19). It holds no state between calls;
// one Sender serves many goroutines at once.
type Sender struct {
	rootCAs  *x509.CertPool
	resolver egress.Resolver
}

// New returns a Sender.
func New(o Options) *Sender { return &Sender{rootCAs: o.RootCAs, resolver: o.Resolver} }

// client is the egress client of one call, which connects to no address
// allow refuses and names Palaver as its user agent.
func (s *Sender) client(allow func(netip.Addr) bool) client {
	return client{egress.Client(egress.Options{Allow: allow, RootCAs: s.rootCAs, Timeout: Timeout, Resolver: s.resolver})}
}

type client struct{ c *http.Client }

// Do is webpush-go's HTTPClient: every request of a call is made here.
func (c client) Do(req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", "Palaver/"+build.Current().Version)
	return c.c.Do(req)
}

// finish reads and closes an answer, and says how the call went.
func finish(resp *http.Response, err error, start time.Time) Result {
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without "Post <url>:", which the caller's log shows beside it
		}
		return Result{Err: err, Duration: time.Since(start)}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	return Result{Status: resp.StatusCode, Duration: time.Since(start)}
}
