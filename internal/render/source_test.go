package render_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/palaverhq/palaver/internal/render"
)

// shown is the text a reader sees of rendered HTML: tags dropped, entities
// decoded, each line's trailing space and runs of blank lines dropped.
func shown(h string) string {
	h = strings.ReplaceAll(h, "<br>\n", "\n")
	h = strings.ReplaceAll(h, "</p>\n<p>", "\n\n")
	h = html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(h, ""))
	return normal(h)
}

// normal is text as a reader compares it: each line's trailing white
// space and runs of blank lines dropped, no blank lines at either end.
// (White space a reader cannot see is not compared.)
func normal(s string) string {
	var lines []string
	for line := range strings.Lines(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")) {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if line == "" && (len(lines) == 0 || lines[len(lines)-1] == "") {
			continue
		}
		lines = append(lines, line)
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

var hostileText = []string{
	"# not a heading", "###### nor this", "- not a list", "* nor this", "+ nor this", "1. not a list", "2) nor this", "1986. A good year",
	"> not a quote", "<b>bold?</b> <i>no</i>", "<!-- a comment -->", "<script>alert(1)</script>", "<div>\nblock\n</div>",
	"*a* _b_ **c** __d__ `e` ~~f~~", "[link](http://a.example) ![img](/projects/p1/images/img_1)", "<https://a.example>",
	"a | b\n--|--\n1 | 2", "| a |\n|---|", "line one\nline two\n\nnew paragraph", "    indented code?", "\tindented by a tab",
	"  two spaces", "snake_case_name and _emphasis_ and __x__ and a_", "&copy; &amp; &#60;", `back\slash\`, `\*not emphasis\*`,
	"text\n===", "text\n---", "===", "***", "---", "___", "- - -", "[ref]: http://a.example", "[^1]", "emoji 🎉, ü_ü, —_x_—",
	"trailing  \nspaces", "http://a.example/x_y?q=1&b=2", "a\n\n\n\nb", "```\nfence\n```", "~~~\nfence\n~~~", "a  \nb",
	"x\r\ny", "<", "&", "\\", "_", "*", "1.", "#", "|", "a\x00b",
}

// TestEscape: plain text escaped as markdown renders as the same
// characters, line for line.
func TestEscape(t *testing.T) {
	for _, s := range hostileText {
		src := render.Escape(s)
		if got, want := shown(string(render.Markdown(src, render.Options{}))), normal(strings.ReplaceAll(s, "\x00", "\uFFFD")); got != want {
			t.Errorf("Escape(%q) = %q, which shows as %q", s, src, got)
		}
	}
	for s, want := range map[string]string{
		"Ship it on Friday.":      "Ship it on Friday.",
		"see store_test.go":       "see store_test.go",
		"# 1. <b>&":               `\# 1. \<b>\&`,
		"2. two\nthree":           "2\\. two\\\nthree",
		"a\n\nb":                  "a\n\nb",
		"a\\\nb":                  "a&#92;\\\nb",
		"    code":                "&#32;   code",
		"_x_ and a|b ~~c~~ [d]e`": `\_x\_ and a\|b \~\~c\~\~ \[d\]e` + "\\`",
	} {
		if got := render.Escape(s); got != want {
			t.Errorf("Escape(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range hostileText {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
		src := render.Escape(s)
		if got, want := shown(string(render.Markdown(src, render.Options{}))), normal(s); got != want {
			t.Errorf("Escape(%q) = %q, which shows as %q", s, src, got)
		}
	})
}

// own is the Options of a post in project p1: its own images show.
var own = render.Options{Image: func(dest string) (string, bool) { return dest, strings.HasPrefix(dest, "/projects/p1/images/") }}

// TestSource: a post's markdown is kept as written, but for its raw HTML,
// which becomes text; code keeps its "<"; links and images the dashboard
// shows stay as they are.
func TestSource(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# Plan\n\n- **bold** and `a<b>`\n\n```\n<div>\n```", "# Plan\n\n- **bold** and `a<b>`\n\n```\n<div>\n```"},
		{"hi <b>there</b>", "hi &lt;b>there&lt;/b>"},
		{"<div>\n<script>alert(1)</script>\n</div>\n\nafter", "&lt;div>\n&lt;script>alert(1)&lt;/script>\n&lt;/div>\n\nafter"},
		{"a <!-- hidden --> b", "a &lt;!-- hidden --> b"},
		{"<script>\nx\n\ny <i>z</i>\n</script>", "&lt;script>\nx\n\ny &lt;i>z&lt;/i>\n&lt;/script>"},
		{"> quoted <img src=x onerror=alert(1)>", "> quoted &lt;img src=x onerror=alert(1)>"},
		{"<https://a.example> and 5 < 6", "<https://a.example> and 5 < 6"},
		{"![shot](/projects/p1/images/img_1)", "![shot](/projects/p1/images/img_1)"},
		{"[docs](https://a.example/docs \"t\") [mail](mailto:a@b.example) [rel](../x) [r]\n\n[r]: http://a.example", "[docs](https://a.example/docs \"t\") [mail](mailto:a@b.example) [rel](../x) [r]\n\n[r]: http://a.example"},
		// What the dashboard would not show becomes text, or a plain link.
		{"[x](javascript:alert(1))", `\[x](javascript:alert(1))`},
		{"<javascript:alert(1)>", "&lt;javascript:alert(1)>"},
		{"[x][r]\n\n[r]: JaVaScRiPt:alert(1)", "\\[x][r]\n\n\\[r]: JaVaScRiPt:alert(1)"},
		{"![chart](https://evil.example/x.png)", "[chart](https://evil.example/x.png)"},
		{"![chart][i]\n\n[i]: https://evil.example/x.png", "[chart][i]\n\n[i]: https://evil.example/x.png"},
		{"![chart](data:image/png;base64,AAAA)", `\[chart](data:image/png;base64,AAAA)`},
		{"![other project](/projects/p2/images/img_1)", "[other project](/projects/p2/images/img_1)"},
		{"`[x](javascript:alert(1))`", "`[x](javascript:alert(1))`"},
	} {
		got := render.Source(tc.src, own)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("Source(%q) (-want +got):\n%s", tc.src, d)
		}
		if again := render.Source(got, own); again != got {
			t.Errorf("Source is not done with %q: %q", got, again)
		}
	}
}

// dangerous is every way a post may try a link or an image the dashboard
// would not show: javascript:, data: and vbscript: in mixed case, with a
// character reference in the scheme, with white space before it or
// inside it, percent-encoded; as an inline link (with or without <> and a
// title), a full, collapsed or shortcut reference, an autolink, and an
// image inline or by reference; and an image from elsewhere.
func dangerous() []string {
	var out []string
	for _, dest := range []string{"javascript:alert(1)", "JaVaScRiPt:alert(1)", "java&#x73;cript:alert(1)", "java&#115;cript:alert(1)",
		"&#106;avascript:alert(1)", "javascript&colon;alert(1)", "java\\script:alert(1)", "javascript%3Aalert(1)",
		"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "DATA:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)", "VbScRiPt:msgbox(1)"} {
		out = append(out, "[x]("+dest+")", "[x](  "+dest+" \"title\")", "[x](<"+dest+">)", "[x](< \t"+dest+">)", "[x](<java\tscript:alert(1)>)",
			"[x][r]\n\n[r]: "+dest, "[R][]\n\n[r]:   "+dest+" 'title'", "[r]\n\n[r]:\n  "+dest, "![x]("+dest+")", "![x][r]\n\n[r]: "+dest,
			"> - [x]("+dest+")", "| a |\n|---|\n| [x]("+dest+") |", "[![x](https://evil.example/i.png)]("+dest+")", "[x [y]("+dest+")](https://a.example)")
	}
	for _, auto := range []string{"<javascript:alert(1)>", "<JaVaScRiPt:alert(1)>", "<data:text/html,x>", "<vbscript:msgbox(1)>", "<Javascript:alert%281%29>"} {
		out = append(out, auto, "> "+auto, "- a "+auto)
	}
	return append(out, "![x](https://evil.example/i.png)", "![x](//evil.example/i.png)", "![x](HTTPS://evil.example/i.png \"t\")",
		"![x][i]\n\n[i]: https://evil.example/i.png", "![x](/projects/p2/images/img_1)")
}

// badURL reports whether a URL in an attribute of a page is not one the
// dashboard links to: its scheme, read as a browser reads it (the
// attribute's entities decoded, white space and controls dropped), as
// written or percent-decoded, other than http, https or mailto.
func badURL(attr string) bool {
	u := html.UnescapeString(attr)
	d, err := url.PathUnescape(u)
	if err != nil {
		d = u
	}
	for _, v := range []string{u, d} {
		v = strings.Map(func(r rune) rune {
			if r <= ' ' {
				return -1
			}
			return r
		}, v)
		i := strings.IndexAny(v, ":/?#")
		if i < 0 || v[i] != ':' || !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`).MatchString(v[:i]) {
			continue // no scheme, as a browser parses URLs: relative
		}
		switch strings.ToLower(v[:i]) {
		case "http", "https", "mailto":
		default:
			return true
		}
	}
	return false
}

// viewer shows everything it is given, as a markdown viewer may: goldmark
// with raw HTML and every URL allowed.
var viewer = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))

// checkViewed fails t when out, the Source of src, shown by viewer links
// to anything but http, https and mailto or shows an image but the
// project's own.
func checkViewed(t *testing.T, src, out string) {
	t.Helper()
	var b strings.Builder
	if err := viewer.Convert([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, m := range regexp.MustCompile(`(?i)(href|src)="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if badURL(m[2]) || strings.EqualFold(m[1], "src") && !strings.HasPrefix(m[2], "/projects/p1/images/") {
			t.Errorf("Source(%q) = %q, shown as %q: %s=%q", src, out, page, m[1], m[2])
		}
	}
}

// TestSourceLeavesNothingToRun: whatever a post tries, its Source shown by
// a viewer that shows everything links to nothing but http, https and
// mailto, and shows no image but the project's own.
func TestSourceLeavesNothingToRun(t *testing.T) {
	for _, src := range append(dangerous(), hostileText...) {
		out := render.Source(src, own)
		checkViewed(t, src, out)
		if again := render.Source(out, own); again != out {
			t.Errorf("Source is not done with %q: %q", out, again)
		}
	}
}

// TestSourceShowsWhatTheDashboardShows: a post's Source rendered by the
// dashboard's renderer looks as the post itself does there — the text a
// reader sees is the same — for every link and image form.
func TestSourceShowsWhatTheDashboardShows(t *testing.T) {
	for _, src := range append(dangerous(), "[ok](https://a.example) ![shot](/projects/p1/images/img_1) <https://a.example>") {
		out := render.Source(src, own)
		page := string(render.Markdown(out, own))
		if strings.Contains(page, "<img") != strings.Contains(string(render.Markdown(src, own)), "<img") {
			t.Errorf("Source(%q) = %q: an image shown on one page and not the other", src, out)
		}
		for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
			if badURL(m[1]) {
				t.Errorf("Source(%q) = %q links to %q", src, out, m[1])
			}
		}
	}
}

func FuzzSource(f *testing.F) {
	for _, s := range append(dangerous(), hostileText...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := render.Source(s, own)
		checkViewed(t, s, got)
		if again := render.Source(got, own); again != got {
			t.Errorf("Source(%q) = %q, which still has something to change: %q", s, got, again)
		}
		if !strings.ContainsAny(s, "<[!") && strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD") != got {
			t.Errorf("Source(%q) = %q: changed a post with no HTML, link or image", s, got)
		}
	})
}
