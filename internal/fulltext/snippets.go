package fulltext

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// A search hit's snippet (§18): a short piece of the body as stored —
// never its normalised search words — around the words the query looked
// for, each marked, cut on the boundaries of what a reader sees as one
// character (a grapheme cluster: an emoji with its modifiers, a flag, a
// letter with its accents), and between words where there are spaces
// between words.

// SnippetPart is a piece of a snippet: text as the body has it (white
// space made single spaces), Match when it is a word the query looked for.
type SnippetPart struct {
	Text  string
	Match bool
}

// Snippet is a short piece of a message's body around the words a search
// matched, at most SnippetLength characters of it, with "…" where it was
// cut — always between grapheme clusters, and between words where it can.
type Snippet []SnippetPart

// Marks open and close each matched word in Marked.
const (
	MarkOpen  = "**"
	MarkClose = "**"
)

// Marked is the snippet as one line with each matched word between
// MarkOpen and MarkClose, as tools and the REST API give it.
func (s Snippet) Marked() string {
	var b strings.Builder
	for _, p := range s {
		if p.Match {
			b.WriteString(MarkOpen + p.Text + MarkClose)
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// String is the snippet's text without marks.
func (s Snippet) String() string {
	var b strings.Builder
	for _, p := range s {
		b.WriteString(p.Text)
	}
	return b.String()
}

// marks is what a snippet marks (Query.marks): search words, and single
// CJK characters that mark the words they start.
type marks struct {
	words, prefixes map[string]bool
}

// bodyWord is a search word of a body: where it is, in bytes and in
// characters, and whether (and which bytes of it) the query looked for.
type bodyWord struct {
	start, end   int // bytes
	rstart, rend int // characters
	markEnd      int // the end of the bytes marked, when it matches
	key          string
	match, cjk   bool
}

// bodyText is a body with what cutting it needs: the byte offset of each
// of its characters, and those of its grapheme clusters.
type bodyText struct {
	s        string
	runes    []int // the byte offset of each character, then len(s)
	clusters []int // the byte offset of each grapheme cluster, then len(s)
}

func newBodyText(s string) *bodyText {
	b := &bodyText{s: s}
	for i := range s {
		b.runes = append(b.runes, i)
	}
	b.runes = append(b.runes, len(s))
	state, at := -1, 0
	for rest := s; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		b.clusters = append(b.clusters, at)
		at += len(c)
	}
	b.clusters = append(b.clusters, len(s))
	return b
}

// char is the index of the character at byte i.
func (b *bodyText) char(i int) int { return sort.SearchInts(b.runes, i) }

// clusterStart is the start of the grapheme cluster holding byte i, and
// clusterEnd the end of the one holding byte i-1 (i itself when i ends one).
func (b *bodyText) clusterStart(i int) int {
	k := sort.SearchInts(b.clusters, i)
	if k < len(b.clusters) && b.clusters[k] == i {
		return i
	}
	return b.clusters[k-1]
}

func (b *bodyText) clusterEnd(i int) int { return b.clusters[sort.SearchInts(b.clusters, i)] }

// Cut is the snippet of body for q: the SnippetLength characters of body
// that hold the most different words q looks for (the first such place;
// the start when none matched, as when only the summary did), starting a
// little before the first of them, each such word marked.
func Cut(body string, q *Query) Snippet { return cutSnippet(body, q.marks()) }

// cutSnippet is Cut with what to mark.
func cutSnippet(body string, m marks) Snippet {
	b := newBodyText(body)
	var ws []bodyWord
	for _, t := range searchTokens(body) {
		w := bodyWord{start: t.start, end: t.end, rstart: b.char(t.start), rend: b.char(t.end), key: t.word, cjk: t.cjk}
		first, _ := utf8.DecodeRuneInString(t.word)
		switch {
		case m.words[t.word]:
			w.match, w.markEnd = true, t.end
		case t.cjk && m.prefixes[string(first)]:
			w.match, w.markEnd, w.key = true, t.firstEnd, string(first)
		}
		ws = append(ws, w)
	}
	chars := len(b.runes) - 1
	from, to := 0, chars // in characters
	if chars > SnippetLength {
		from, to = window(ws, chars)
		// On grapheme clusters: the start moves on to the next one, the
		// end back to the last one that ends inside.
		from = b.char(b.clusterEnd(b.runes[from]))
		to = max(b.char(b.clusterStart(b.runes[to])), from)
	}
	return snippetParts(b, ws, from, to, chars)
}

// window picks the characters [from, to) of a body of chars characters
// that a snippet shows, no more than SnippetLength of them.
func window(ws []bodyWord, chars int) (from, to int) {
	const lead = SnippetLength / 4 // context before the first matched word
	best, anchor := -1, -1
	for k, a := range ws {
		if !a.match {
			continue
		}
		f := max(a.rstart-lead, 0)
		t := min(f+SnippetLength, chars)
		f = t - SnippetLength
		seen := map[string]bool{}
		for _, w := range ws[k:] {
			if w.rend > t {
				break
			}
			if w.match {
				seen[w.key] = true
			}
		}
		if len(seen) > best {
			best, anchor, from, to = len(seen), k, f, t
		}
	}
	// Between words where it can: a word cut at the start is left out,
	// and so is one cut at the end, unless that would leave out the
	// matched word the snippet is about (or leave nothing). CJK runs have
	// no spaces between words, and are cut anywhere.
	keepFrom, keepTo := 0, 1
	if anchor >= 0 {
		keepFrom, keepTo = ws[anchor].rstart, ws[anchor].rend
	} else {
		to = SnippetLength
	}
	for _, w := range ws {
		if w.cjk {
			continue
		}
		if w.rstart < from && w.rend > from && w.rend <= keepFrom {
			from = w.rend
		}
		if w.rstart < to && w.rend > to && w.rstart >= keepTo {
			to = w.rstart
		}
	}
	return from, to
}

// snippetParts is the body's characters [from, to) as a snippet's parts:
// the marked words' bytes, widened to whole grapheme clusters and joined
// where they touch, each a part of their own.
func snippetParts(b *bodyText, ws []bodyWord, from, to, chars int) Snippet {
	body := b.s
	start, end := b.runes[from], b.runes[to]
	var marks [][2]int
	for _, w := range ws {
		if !w.match {
			continue
		}
		m := [2]int{b.clusterStart(w.start), b.clusterEnd(w.markEnd)}
		if m[0] < start || m[1] > end {
			continue
		}
		if n := len(marks); n > 0 && m[0] <= marks[n-1][1] {
			marks[n-1][1] = max(marks[n-1][1], m[1])
			continue
		}
		marks = append(marks, m)
	}
	var s Snippet
	add := func(text string, match bool) {
		if !match {
			text = oneLine(text)
		}
		if text == "" {
			return
		}
		if n := len(s); n > 0 && !s[n-1].Match && !match {
			s[n-1].Text += text
			return
		}
		s = append(s, SnippetPart{Text: text, Match: match})
	}
	if from > 0 {
		add("…", false)
	}
	at := start
	for _, m := range marks {
		add(body[at:m[0]], false)
		add(body[m[0]:m[1]], true)
		at = m[1]
	}
	add(body[at:end], false)
	if to < chars {
		add("…", false)
	}
	// No space inside the snippet's ends.
	if len(s) > 0 && !s[0].Match {
		s[0].Text = strings.Replace(s[0].Text, "… ", "…", 1)
		s[0].Text = strings.TrimLeft(s[0].Text, " ")
	}
	if n := len(s); n > 0 && !s[n-1].Match {
		last := strings.TrimSuffix(s[n-1].Text, "…")
		s[n-1].Text = strings.TrimRight(last, " ") + s[n-1].Text[len(last):]
	}
	return s
}

// oneLine turns every run of white space in s into one space.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != ' ' }) && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
	return b.String()
}
