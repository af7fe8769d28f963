package render_test

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

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

// TestWithoutHTML: a post's markdown is kept as written, but for its raw
// HTML, which becomes text; code keeps its "<".
func TestWithoutHTML(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"# Plan\n\n- **bold** and `a<b>`\n\n```\n<div>\n```", "# Plan\n\n- **bold** and `a<b>`\n\n```\n<div>\n```"},
		{"hi <b>there</b>", "hi &lt;b>there&lt;/b>"},
		{"<div>\n<script>alert(1)</script>\n</div>\n\nafter", "&lt;div>\n&lt;script>alert(1)&lt;/script>\n&lt;/div>\n\nafter"},
		{"a <!-- hidden --> b", "a &lt;!-- hidden --> b"},
		{"<script>\nx\n\ny <i>z</i>\n</script>", "&lt;script>\nx\n\ny &lt;i>z&lt;/i>\n&lt;/script>"},
		{"> quoted <img src=x onerror=alert(1)>", "> quoted &lt;img src=x onerror=alert(1)>"},
		{"<https://a.example> and 5 < 6", "<https://a.example> and 5 < 6"},
		{"![shot](/projects/p1/images/img_1)", "![shot](/projects/p1/images/img_1)"},
	} {
		got := render.WithoutHTML(tc.src)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("WithoutHTML(%q) (-want +got):\n%s", tc.src, d)
		}
		if again := render.WithoutHTML(got); again != got {
			t.Errorf("WithoutHTML is not done with %q: %q", got, again)
		}
	}
}

func FuzzWithoutHTML(f *testing.F) {
	for _, s := range hostileText {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := render.WithoutHTML(s)
		if again := render.WithoutHTML(got); again != got {
			t.Errorf("WithoutHTML(%q) = %q, which still has HTML: %q", s, got, again)
		}
		if !strings.Contains(s, "<") && strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD") != got {
			t.Errorf("WithoutHTML(%q) = %q: changed a post with no HTML", s, got)
		}
	})
}
