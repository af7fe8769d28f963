package render

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Markdown as source, for documents that leave Palaver (an export, §18):
// Escape writes plain text so that any CommonMark reader shows it as it
// was written, and WithoutHTML keeps a markdown post as written but for
// its raw HTML, which becomes text — the same rule the dashboard follows
// (§11, §15), kept in the source itself because the document's reader is
// not Palaver.

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

// WithoutHTML returns markdown source as written, except that its raw
// HTML — blocks and inline tags, comments and declarations — is made text:
// each "<" of it becomes "&lt;", which every reader shows as the character.
// Code spans and code blocks are left alone: they show their text already.
func WithoutHTML(src string) string {
	src = strings.ToValidUTF8(strings.ReplaceAll(src, "\x00", "\uFFFD"), "\uFFFD")
	// Each pass turns at least one "<" into "&lt;", so this ends; a pass
	// that finds none is the last. Text that was inside a block of HTML
	// is read again as what it is now.
	for {
		source := []byte(src)
		var at []int
		doc := parser().Parse(text.NewReader(source))
		ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.HTMLBlock:
				lines := n.Lines()
				for i := range lines.Len() {
					at = appendLT(at, source, lines.At(i))
				}
				if n.HasClosure() {
					at = appendLT(at, source, n.ClosureLine)
				}
				return ast.WalkSkipChildren, nil
			case *ast.RawHTML:
				for i := range n.Segments.Len() {
					at = appendLT(at, source, n.Segments.At(i))
				}
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
		if len(at) == 0 {
			return src
		}
		var b bytes.Buffer
		last := 0
		for _, i := range at {
			if i < last {
				continue // two nodes named the same "<"
			}
			b.Write(source[last:i])
			b.WriteString("&lt;")
			last = i + 1
		}
		b.Write(source[last:])
		src = b.String()
	}
}

// appendLT appends the offsets of the "<"s of a segment of source.
func appendLT(at []int, source []byte, seg text.Segment) []int {
	for i := seg.Start; i < seg.Stop && i < len(source); i++ {
		if source[i] == '<' {
			at = append(at, i)
		}
	}
	return at
}
