package render

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown as source, for documents that leave Palaver (an export, §18):
// Escape writes plain text so that any CommonMark reader shows it as it
// was written, and Source keeps a markdown post as written but for what
// the dashboard would not show — raw HTML, links to javascript: and its
// kind, images from elsewhere — which becomes text or a plain link: the
// dashboard's rules (§11, §15, render.go's), kept in the source itself
// because the document's reader is not Palaver.

// Escape returns text as markdown source that a CommonMark (and GFM)
// renderer shows as the same characters: every character with a meaning
// inline is backslash-escaped, line starts cannot open a block (a heading,
// a list, a quote, code, a table or an HTML block), and each line break is
// a hard break. Blank lines stay paragraph breaks.
func Escape(s string) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(s, "\n")
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if strings.TrimSpace(line) == "" {
			continue // a paragraph break, as written
		}
		escapeLine(&b, line)
		if i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			b.WriteByte('\\') // a hard break: the next line stays a line of its own
		}
	}
	return b.String()
}

// inline are the characters escaped wherever they are: those that open
// emphasis, code, links and images, HTML and autolinks, entities,
// strikethrough and table cells, and the backslash itself. An underscore
// between two letters or digits opens nothing and is left as it is
// (snake_case stays readable).
const inline = "\\`*_[]<&~|"

// escapeLine writes one non-blank line of text.
func escapeLine(b *strings.Builder, line string) {
	// Indentation would make code of the line (four spaces): the first
	// space or tab is written as a character reference, which is no
	// indentation, and the rest follow it as they are.
	switch line[0] {
	case ' ':
		b.WriteString("&#32;")
		line = line[1:]
	case '\t':
		b.WriteString("&#9;")
		line = line[1:]
	}
	rest := strings.TrimLeft(line, " \t")
	b.WriteString(line[:len(line)-len(rest)])
	// What opens a block at a line's start and is not escaped anyway:
	// headings, quotes, list items, thematic breaks and setext underlines.
	if rest != "" && strings.IndexByte("#>-+=", rest[0]) >= 0 {
		b.WriteByte('\\')
	}
	// Digits then . or ) open an ordered list item.
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '\\' && i == len(rest)-1:
			// "\\" then the hard break's "\" is a hard break to CommonMark,
			// but not to every reader (goldmark among them): a reference
			// says it plainly.
			b.WriteString("&#92;")
			continue
		case c == '_' && wordAt(rest[:i], false) && wordAt(rest[i+1:], true):
		case strings.IndexByte(inline, c) >= 0, i == digits && digits > 0 && (c == '.' || c == ')'):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
}

// wordAt reports whether the rune at the start (first) or end of s is a
// letter or a digit.
func wordAt(s string, first bool) bool {
	var r rune
	if first {
		r, _ = utf8.DecodeRuneInString(s)
	} else {
		r, _ = utf8.DecodeLastRuneInString(s)
	}
	return s != "" && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// Source returns markdown source as written, but for what Markdown with o
// would not show, so that any CommonMark reader of the document shows no
// more than the dashboard does, by the dashboard's own rules: raw HTML —
// blocks and inline tags, comments and declarations — becomes text (each
// "<" of it "&lt;"); a link, an autolink or a link reference definition
// whose destination Markdown would not link (javascript:, data:,
// vbscript:, … however it is spelled) becomes text; an image o.Image does
// not allow becomes a plain link to its destination, or text when that may
// not be linked either, so that opening the document loads nothing from
// elsewhere. Code spans and code blocks are left alone: they show their
// text already.
func Source(src string, o Options) string {
	src = strings.ToValidUTF8(strings.ReplaceAll(src, "\x00", "\uFFFD"), "\uFFFD")
	// Each pass makes text of at least one construct that was not, so this
	// ends; a pass that finds none is the last. What a pass made text is
	// read again as what it is now. Should a node not say where it
	// starts, or the passes not end, the whole post is made text instead.
	for range maxPasses {
		source := []byte(src)
		edits, ok := sourceEdits(source, o)
		if !ok {
			return Escape(src)
		}
		if len(edits) == 0 {
			return src
		}
		slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
		var b bytes.Buffer
		last, prev := 0, -1
		for _, e := range edits {
			if e.at < last || e.at == prev {
				continue // two nodes named the same place: one edit is enough
			}
			prev = e.at
			b.Write(source[last:e.at])
			b.WriteString(e.insert)
			last = e.at + e.remove
		}
		b.Write(source[last:])
		src = b.String()
	}
	return Escape(src)
}

// maxPasses bounds Source's passes: each removes one level of nesting.
const maxPasses = 64

// edit replaces remove bytes of a source at at with insert.
type edit struct {
	at, remove int
	insert     string
}

// sourceEdits are the edits that make text of what source shows that
// Markdown with o would not; ok is false when a node to change does not
// say where it starts.
func sourceEdits(source []byte, o Options) (edits []edit, ok bool) {
	ok = true
	// at is where a node starts, when source has c there.
	at := func(n ast.Node, c byte) (int, bool) {
		i := n.Pos()
		if i < 0 || i >= len(source) || source[i] != c {
			ok = false
			return 0, false
		}
		return i, true
	}
	doc := parser().Parse(text.NewReader(source))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.HTMLBlock:
			lines := n.Lines()
			for i := range lines.Len() {
				edits = appendLT(edits, source, lines.At(i))
			}
			if n.HasClosure() {
				edits = appendLT(edits, source, n.ClosureLine)
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			for i := range n.Segments.Len() {
				edits = appendLT(edits, source, n.Segments.At(i))
			}
			return ast.WalkSkipChildren, nil
		case *ast.LinkReferenceDefinition:
			// Its label, escaped, is no definition: every link that used
			// it is text too, in every reader, however it matches labels.
			if _, allowed := linkHref(n.Destination); !allowed && n.Lines().Len() > 0 {
				start := n.Lines().At(0).Start
				if i := bytes.IndexByte(source[start:], '['); i >= 0 {
					edits = append(edits, edit{at: start + i, insert: `\`})
				} else {
					ok = false
				}
			}
		case *ast.Link:
			if _, allowed := linkHref(n.Destination); !allowed {
				if i, found := at(n, '['); found {
					edits = append(edits, edit{at: i, insert: `\`})
				}
			}
		case *ast.AutoLink:
			if _, allowed := autoLinkHref(n, source); !allowed {
				if i, found := at(n, '<'); found {
					edits = append(edits, edit{at: i, remove: 1, insert: "&lt;"})
				}
			}
		case *ast.Image:
			if _, allowed := o.imageSrc(n.Destination); !allowed {
				if i, found := at(n, '!'); found {
					// "![alt](dest)" is then the link "[alt](dest)", or
					// the text "\[alt](dest)".
					e := edit{at: i, remove: 1}
					if _, linkable := linkHref(n.Destination); !linkable {
						e.insert = `\`
					}
					edits = append(edits, e)
				}
			}
		}
		return ast.WalkContinue, nil
	})
	return edits, ok
}

// appendLT appends an edit making text of each "<" of a segment of source.
func appendLT(edits []edit, source []byte, seg text.Segment) []edit {
	for i := seg.Start; i < seg.Stop && i < len(source); i++ {
		if source[i] == '<' {
			edits = append(edits, edit{at: i, remove: 1, insert: "&lt;"})
		}
	}
	return edits
}
