// Package render turns untrusted markdown (message bodies, posts, notes) into
// HTML that is safe inside a page element (DESIGN.md §11, §15): CommonMark
// plus GFM strikethrough and tables; quotes starting **Tip:**, **Note:** or
// **Warning:** become callouts; raw HTML is shown as the characters written;
// links keep only http, https, mailto and relative destinations; images
// appear only when Options.Image allows them.
package render

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	goldmarkparser "github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// Options say what a rendering may show beyond plain markdown.
type Options struct {
	// Image decides whether an image's destination may be shown, and the
	// src to use for it. nil: no image is ever shown. An image that is not
	// allowed renders as its alt text in a link-free span, never an <img>.
	//
	// dest is the destination as written, with markdown escapes and
	// entities decoded; src is HTML-escaped on output and must itself be an
	// http, https or relative URL, or the image is not shown.
	Image func(dest string) (src string, ok bool)
}

// Markdown renders src (untrusted) as safe HTML (DESIGN.md §11): the result
// is a sequence of block elements, the same bytes for the same src and
// Options. Raw HTML in src appears as escaped text; links to schemes other
// than http, https and mailto, and images Options.Image refuses, appear as
// their text.
func Markdown(src string, o Options) template.HTML {
	// CommonMark asks for NUL to become U+FFFD; invalid UTF-8 goes the same way
	// so that every byte written is a character a browser shows as such.
	src = strings.ToValidUTF8(strings.ReplaceAll(src, "\x00", "\uFFFD"), "\uFFFD")
	md := goldmark.New(
		goldmark.WithExtensions(extensions()...),
		goldmark.WithRendererOptions(
			// goldmark's own HTML renderer has priority 1000; a lower number wins.
			renderer.WithNodeRenderers(util.Prioritized(&nodeRenderer{o: o}, 100)),
		),
	)
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		// Unreachable: a bytes.Buffer does not fail and no render func
		// returns an error. Showing the text is still the safe answer.
		return template.HTML("<p>" + template.HTMLEscapeString(src) + "</p>\n")
	}
	return template.HTML(b.String())
}

// extensions are the syntax beyond CommonMark that posts may use.
func extensions() []goldmark.Extender {
	return []goldmark.Extender{
		extension.Strikethrough,
		// align="…" rather than style="…", which a strict CSP would block.
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
	}
}

// parser reads markdown as Markdown does.
func parser() goldmarkparser.Parser {
	return goldmark.New(goldmark.WithExtensions(extensions()...)).Parser()
}

// nodeRenderer overrides goldmark's HTML renderer for the nodes where
// Palaver's rules differ from its defaults: quotes (callouts), raw HTML,
// links, autolinks and images.
type nodeRenderer struct {
	o Options
}

// RegisterFuncs implements renderer.NodeRenderer.
func (r *nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindBlockquote, r.blockquote)
	reg.Register(ast.KindHTMLBlock, r.htmlBlock)
	reg.Register(ast.KindRawHTML, r.rawHTML)
	reg.Register(ast.KindLink, r.link)
	reg.Register(ast.KindAutoLink, r.autoLink)
	reg.Register(ast.KindImage, r.image)
}

func (r *nodeRenderer) blockquote(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
	kind := calloutKind(n, source)
	switch {
	case kind == "" && entering:
		_, _ = w.WriteString("<blockquote>\n")
	case kind == "":
		_, _ = w.WriteString("</blockquote>\n")
	case entering:
		_, _ = w.WriteString(`<aside class="callout callout-` + kind + "\">\n")
	default:
		_, _ = w.WriteString("</aside>\n")
	}
	return ast.WalkContinue, nil
}

// calloutKind returns "tip", "note" or "warning" when quote's first block is
// a paragraph that starts with **Tip:**, **Note:** or **Warning:**, else "".
func calloutKind(quote ast.Node, source []byte) string {
	p, ok := quote.FirstChild().(*ast.Paragraph)
	if !ok {
		return ""
	}
	em, ok := p.FirstChild().(*ast.Emphasis)
	if !ok || em.Level != 2 || em.ChildCount() != 1 {
		return ""
	}
	t, ok := em.FirstChild().(*ast.Text)
	if !ok || t.Segment.Start < 2 || string(source[t.Segment.Start-2:t.Segment.Start]) != "**" {
		return "" // __Tip:__ is bold too, but not what the rule names
	}
	switch string(t.Value(source)) {
	case "Tip:":
		return "tip"
	case "Note:":
		return "note"
	case "Warning:":
		return "warning"
	}
	return ""
}

// htmlBlock shows a block of raw HTML as a paragraph of its escaped source.
func (r *nodeRenderer) htmlBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var b []byte
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		b = append(b, line.Value(source)...)
	}
	if closure := n.ClosureLine; n.HasClosure() {
		b = append(b, closure.Value(source)...)
	}
	_, _ = w.WriteString("<p>")
	_, _ = w.Write(util.EscapeHTML(bytes.TrimRight(b, "\r\n")))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// rawHTML shows inline raw HTML as its escaped source.
func (r *nodeRenderer) rawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*ast.RawHTML)
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
		}
	}
	return ast.WalkSkipChildren, nil
}

// link writes an <a> only for an allowed destination; otherwise the link's
// text is rendered without it.
func (r *nodeRenderer) link(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := linkHref(n.Destination)
	if !ok {
		return ast.WalkContinue, nil
	}
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	writeStartA(w, href, n.Title)
	return ast.WalkContinue, nil
}

// writeStartA writes the start tag of a link to an allowed href.
func writeStartA(w util.BufWriter, href, title []byte) {
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(href))
	_ = w.WriteByte('"')
	writeTitle(w, title)
	_, _ = w.WriteString(` rel="nofollow noopener">`)
}

// writeTitle writes a link or image title attribute, if there is a title.
func writeTitle(w util.BufWriter, title []byte) {
	if title != nil {
		_, _ = w.WriteString(` title="`)
		html.DefaultWriter.Write(w, title) // decodes escapes and entities, then escapes
		_ = w.WriteByte('"')
	}
}

func (r *nodeRenderer) autoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := util.EscapeHTML(n.Label(source))
	href, ok := autoLinkHref(n, source)
	if !ok {
		_, _ = w.Write(label)
		return ast.WalkContinue, nil
	}
	writeStartA(w, href, nil)
	_, _ = w.Write(label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// autoLinkHref returns the href of an autolink, and whether it is allowed.
func autoLinkHref(n *ast.AutoLink, source []byte) ([]byte, bool) {
	href := util.URLEscape(n.URL(source), false)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(href), []byte("mailto:")) {
		href = append([]byte("mailto:"), href...)
	}
	return href, allowedURL(href, true)
}

// imageSrc returns the src to show an image's destination with, and
// whether Options.Image allows it (an http, https or relative src).
func (o Options) imageSrc(dest []byte) (string, bool) {
	if o.Image == nil {
		return "", false
	}
	src, ok := o.Image(string(decodeDestination(dest)))
	return src, ok && allowedURL([]byte(src), false)
}

// image writes an <img> only when Options.Image allows the destination, and
// otherwise the alt text in a <span>.
func (r *nodeRenderer) image(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	src, ok := r.o.imageSrc(n.Destination)
	if !ok {
		_, _ = w.WriteString("<span>")
		writeAlt(w, source, n)
		_, _ = w.WriteString("</span>")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<img src="`)
	_, _ = w.Write(util.EscapeHTML([]byte(src)))
	_, _ = w.WriteString(`" alt="`)
	writeAlt(w, source, n)
	_ = w.WriteByte('"')
	writeTitle(w, n.Title)
	_ = w.WriteByte('>')
	return ast.WalkSkipChildren, nil
}

// writeAlt writes the plain, escaped text of n's descendants: no markup, and
// line breaks as spaces, so it fits both an attribute and an element.
func writeAlt(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			if c.IsRaw() {
				html.DefaultWriter.RawWrite(w, c.Value(source))
			} else {
				html.DefaultWriter.Write(w, c.Value(source))
			}
			if c.SoftLineBreak() || c.HardLineBreak() {
				_ = w.WriteByte(' ')
			}
		case *ast.String:
			if c.IsCode() || c.IsRaw() {
				html.DefaultWriter.RawWrite(w, c.Value)
			} else {
				html.DefaultWriter.Write(w, c.Value)
			}
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				html.DefaultWriter.RawWrite(w, seg.Value(source))
			}
		default:
			writeAlt(w, source, c)
		}
	}
}

// decodeDestination resolves backslash escapes and character references in a
// link or image destination, as goldmark does before writing one.
func decodeDestination(dest []byte) []byte {
	return util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest)))
}

// linkHref returns the href for a link destination, and whether it is
// allowed: both the decoded destination and the href written are checked.
func linkHref(dest []byte) ([]byte, bool) {
	d := decodeDestination(dest)
	href := util.URLEscape(d, false)
	return href, allowedURL(d, true) && allowedURL(href, true)
}

// allowedURL reports whether u is relative or has scheme http or https, or
// mailto for a link, both as written and percent-decoded, so that no
// spelling of javascript:, data:, vbscript: or file: gets through.
func allowedURL(u []byte, link bool) bool {
	s := string(u)
	d, err := url.PathUnescape(s)
	if err != nil {
		d = s
	}
	for _, v := range []string{s, d} {
		switch sc := scheme(v); {
		case sc == "" || sc == "http" || sc == "https":
		case sc == "mailto" && link:
		default:
			return false
		}
	}
	return true
}

// scheme returns u's scheme in lower case, "" for a relative URL or a
// fragment, reading u as a browser does: tabs and newlines dropped, controls
// and spaces trimmed. Anything before a ':' that precedes every '/', '?' and
// '#' counts as a scheme.
func scheme(u string) string {
	u = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, u)
	u = strings.TrimFunc(u, func(r rune) bool { return r <= ' ' })
	i := strings.IndexAny(u, ":/?#")
	if i < 0 || u[i] != ':' {
		return ""
	}
	return strings.ToLower(u[:i])
}
