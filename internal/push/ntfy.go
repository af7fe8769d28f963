package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// NtfyTopic is an ntfy topic URL split as ntfy's JSON publishing needs it:
// the server's root, which is posted to, and the topic's name.
type NtfyTopic struct {
	Server string // "https://ntfy.example.com/", or with the path ntfy is served under
	Topic  string // "my-alerts"
}

// ntfyName is what ntfy takes as a topic's name.
var ntfyName = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// ParseNtfyTopic splits a topic URL, https://ntfy.example.com/my-alerts,
// into its server and topic, or says what is wrong with it: an https URL
// whose last path segment is the topic (1–64 letters, digits, - and _),
// without user info, query or fragment (a token is given apart).
func ParseNtfyTopic(raw string) (NtfyTopic, error) {
	bad := func(why string) (NtfyTopic, error) {
		return NtfyTopic{}, fmt.Errorf("an ntfy topic URL is https://server/topic, like https://ntfy.sh/my-alerts: %q %s", raw, why)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return bad("is not an absolute URL")
	case u.Scheme != "https":
		return bad("is not https")
	case u.User != nil:
		return bad("has a user name in it (give an access token instead)")
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#"):
		return bad("has a query or a fragment")
	}
	i := strings.LastIndexByte(u.Path, '/')
	topic := u.Path[i+1:]
	if !ntfyName.MatchString(topic) {
		return bad("does not end in a topic name of 1–64 letters, digits, - and _")
	}
	root := *u
	root.Path, root.RawPath = u.Path[:i+1], ""
	return NtfyTopic{Server: root.String(), Topic: topic}, nil
}

// NtfyTarget is where an ntfy publish goes: a topic URL, and the access
// token that may write to it ("": none).
type NtfyTarget struct {
	URL   string
	Token string
}

// ntfyPriority is ntfy's priority (1 min … 5 max) for each of ours.
var ntfyPriority = map[Priority]int{PriorityLow: 2, PriorityNormal: 3, PriorityHigh: 4}

// ntfyMessage is ntfy's JSON publish format.
type ntfyMessage struct {
	Topic    string       `json:"topic"`
	Title    string       `json:"title"`
	Message  string       `json:"message"`
	Priority int          `json:"priority"`
	Tags     []string     `json:"tags,omitempty"`
	Click    string       `json:"click,omitempty"`
	Actions  []ntfyAction `json:"actions,omitempty"`
	// SequenceID makes ntfy 2.16 and newer replace the notification of
	// the same item in place; older servers ignore it. ntfy has no other
	// key: every publish is a new message, with an id ntfy makes.
	SequenceID string `json:"sequence_id,omitempty"`
}

type ntfyAction struct {
	Action string `json:"action"` // "view": open a URL
	Label  string `json:"label"`
	URL    string `json:"url"`
}

// PublishNtfy publishes n to an ntfy topic (§19) in ntfy's JSON format —
// a POST to the server's root naming the topic, with the title, the
// summary as the message (the title when there is none), the priority, tags, the link as the click URL
// and the action as a view button — with the token as a bearer, through
// the egress client, connecting to no address allow refuses. It never
// retries: the hub does.
func (s *Sender) PublishNtfy(ctx context.Context, t NtfyTarget, n Notification, allow func(netip.Addr) bool) Result {
	start := time.Now()
	topic, err := ParseNtfyTopic(t.URL)
	if err != nil {
		return Result{Err: err}
	}
	if err := n.Check(); err != nil {
		return Result{Err: err}
	}
	m := ntfyMessage{Topic: topic.Topic, Title: n.Title, Message: n.Summary, Priority: ntfyPriority[n.priority()],
		Tags: n.Tags, Click: n.Link}
	if m.Message == "" {
		m.Message = n.Title // not ntfy's "triggered"
	}
	if n.Action != nil {
		m.Actions = []ntfyAction{{Action: "view", Label: n.Action.Label, URL: n.Action.URL}}
	}
	if n.ID != "" {
		m.SequenceID = key(n.ID)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return Result{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, topic.Server, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	resp, err := s.client(allow).Do(req)
	return finish(resp, err, start)
}
