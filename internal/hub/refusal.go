package hub

import (
	"fmt"
	"strings"
)

// Refusal is a contract outcome that is not an error (§7, §10.2): the call
// was understood and refused, and the face returns it as a normal result
// with a status (and a trace id). Reason starts with one word naming the rule
// ("contact", "grant", "closing", "notice", "budget", …), then a sentence for
// people.
type Refusal struct {
	Status  string // StatusDenied, StatusHeldByOther or StatusPendingApproval
	Reason  string
	Details map[string]any // extra result fields, e.g. held_by
}

// Contract statuses (§10.2): outcomes that are normal results with a
// status, not errors.
const (
	StatusDenied          = "denied"           // a rule refused; Reason's first word names it
	StatusPendingApproval = "pending_approval" // a person was asked and decides
	StatusHeldByOther     = "held_by_other"    // another live session holds the conversation
	StatusPending         = "pending"          // the owner was asked (request_grant, ask_owner)
	StatusAllowed         = "allowed"          // list_contacts: the contact is within reach
)

func (r *Refusal) Error() string { return r.Status + ": " + Words(nil).Say(r.Reason) }

// Text is the reason as a face says it, in w's words (words.go).
func (r *Refusal) Text(w Words) string { return w.Say(r.Reason) }

// Word is the first word of Reason: the rule that refused.
func (r *Refusal) Word() string {
	w, _, _ := strings.Cut(r.Reason, ":")
	return w
}

func deny(word, format string, args ...any) *Refusal {
	return &Refusal{Status: StatusDenied, Reason: word + ": " + fmt.Sprintf(format, args...)}
}
