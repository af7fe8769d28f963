package hub

import "encoding/base64"

// NewTokenForTest returns a well-formed agent token that was never minted.
func NewTokenForTest() string { return NewTokenSecret(AgentTokenPrefix) }

// CursorForTest is the cursor of position p for readerID in generation gen,
// as this database would have issued it then.
func (h *Hub) CursorForTest(readerID, gen string, p Pos) string {
	keep := h.generation
	h.generation = gen
	defer func() { h.generation = keep }()
	return h.cursor(readerID, p)
}

// PosOfCursorForTest is the position a well-formed cursor names.
func PosOfCursorForTest(cursor string) Pos {
	raw, _ := base64.RawURLEncoding.DecodeString(cursor)
	p, _ := decodePos(raw[:len(raw)-cursorTag])
	return p
}

// GenerationForTest is the current generation.
func (h *Hub) GenerationForTest() string { return h.generation }

// GenerationsForTest are the generations before the current one.
func (h *Hub) GenerationsForTest() []Generation { return h.generations }

// RequestBuckets is how many tokens' request buckets h holds.
func RequestBuckets(h *Hub) int { return h.requests.len() }
