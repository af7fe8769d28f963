package servertest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/palaverhq/palaver/internal/hub"
)

// IDPattern matches an id the hub makes, of any kind: its prefix, "_" and
// 26 base32 digits (hub.NewID).
var IDPattern = regexp.MustCompile(`\b(` + strings.Join([]string{hub.IDUser, hub.IDAgent, hub.IDToken, hub.IDConversation,
	hub.IDMessage, hub.IDGrantRequest, hub.IDInboundAsk, hub.IDQuestion, hub.IDContact, hub.IDProject, hub.IDRequest, hub.IDItem,
	hub.IDImage, hub.IDLogin, hub.IDInvite, hub.IDWebhook, hub.IDWebhookCall, hub.IDWebhookAttempt, hub.IDNotifyTarget, hub.IDNotification, hub.IDNotifyLog}, "|") + `)_[0-9a-z]{26}\b`)

// timePattern matches a time as the faces write it (hub.FormatTime).
var timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)

// vapidPattern matches a VAPID public key (65 bytes, unpadded base64url),
// made anew by each database.
var vapidPattern = regexp.MustCompile(`\bB[A-Za-z0-9_-]{86}\b`)

// Placeholders replaces what differs between runs in a golden transcript
// with what holds still: the nth distinct id of a kind becomes <kind_n>,
// so the same id reads the same wherever it appears, and a time <time>.
// The zero value is ready to use; one value serves one transcript.
type Placeholders struct {
	ids map[string]string
	n   map[string]int
}

// Replace returns s with its ids and times replaced.
func (p *Placeholders) Replace(s string) string {
	if p.ids == nil {
		p.ids, p.n = map[string]string{}, map[string]int{}
	}
	s = IDPattern.ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := p.ids[id]; ok {
			return r
		}
		kind := id[:strings.IndexByte(id, '_')]
		p.n[kind]++
		p.ids[id] = fmt.Sprintf("<%s_%d>", kind, p.n[kind])
		return p.ids[id]
	})
	s = vapidPattern.ReplaceAllString(s, "<vapid_key>")
	return timePattern.ReplaceAllString(s, "<time>")
}
