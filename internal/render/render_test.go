package render_test

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/render"
)

// projectImages allows only project p1's own images, as the dashboard does
// for a post in that project.
func projectImages(dest string) (string, bool) {
	return dest, strings.HasPrefix(dest, "/projects/p1/images/")
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"paragraphs", "one\ntwo\n\nthree", "<p>one\ntwo</p>\n<p>three</p>\n"},
		{"hard break", "a  \nb", "<p>a<br>\nb</p>\n"},
		{"headings", "# One\n\n###### Six\n\nTwo\n---", "<h1>One</h1>\n<h6>Six</h6>\n<h2>Two</h2>\n"},
		{"emphasis", "*em* _em_ **bold** __bold__", "<p><em>em</em> <em>em</em> <strong>bold</strong> <strong>bold</strong></p>\n"},
		{"strikethrough", "~~gone~~", "<p><del>gone</del></p>\n"},
		{"unordered list", "- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"ordered list", "1. a\n2. b", "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"ordered list from 3", "3. a\n4. b", "<ol start=\"3\">\n<li>a</li>\n<li>b</li>\n</ol>\n"},
		{"nested list", "- a\n  1. b", "<ul>\n<li>a\n<ol>\n<li>b</li>\n</ol>\n</li>\n</ul>\n"},
		{"block quote", "> quoted\n> on", "<blockquote>\n<p>quoted\non</p>\n</blockquote>\n"},
		{"fenced code", "```go\nif a < b && c {\n}\n```", "<pre><code class=\"language-go\">if a &lt; b &amp;&amp; c {\n}\n</code></pre>\n"},
		{"fenced code, hostile info string", "```\"><script>\nx\n```", "<pre><code class=\"language-&quot;&gt;&lt;script&gt;\">x\n</code></pre>\n"},
		{"indented code", "    <b>x</b>\n", "<pre><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n"},
		{"inline code", "run `a<b>&c`", "<p>run <code>a&lt;b&gt;&amp;c</code></p>\n"},
		{"thematic break", "a\n\n***\n\nb", "<p>a</p>\n<hr>\n<p>b</p>\n"},
		{"link", "[docs](https://palaver.example/docs?a=1&b=2)",
			`<p><a href="https://palaver.example/docs?a=1&amp;b=2" rel="nofollow noopener">docs</a></p>` + "\n"},
		{"link with title", `[x](http://a.example "say \"hi\"")`,
			`<p><a href="http://a.example" title="say &quot;hi&quot;" rel="nofollow noopener">x</a></p>` + "\n"},
		{"relative and fragment links", "[a](/projects/p1) [b](#top) [c](notes.md)",
			`<p><a href="/projects/p1" rel="nofollow noopener">a</a> <a href="#top" rel="nofollow noopener">b</a> <a href="notes.md" rel="nofollow noopener">c</a></p>` + "\n"},
		{"mailto link", "[mail](mailto:ops@a.example)", `<p><a href="mailto:ops@a.example" rel="nofollow noopener">mail</a></p>` + "\n"},
		{"reference link", "[x][r]\n\n[r]: https://a.example/r", `<p><a href="https://a.example/r" rel="nofollow noopener">x</a></p>` + "\n"},
		{"link destination escaped", "[x](https://a.example/ü%20b)", `<p><a href="https://a.example/%C3%BC%20b" rel="nofollow noopener">x</a></p>` + "\n"},
		{"lone percent sign", "[x](/a/100%)", `<p><a href="/a/100%25" rel="nofollow noopener">x</a></p>` + "\n"},
		{"autolink", "<https://a.example/x>", `<p><a href="https://a.example/x" rel="nofollow noopener">https://a.example/x</a></p>` + "\n"},
		{"email autolink", "<ops@a.example>", `<p><a href="mailto:ops@a.example" rel="nofollow noopener">ops@a.example</a></p>` + "\n"},
		{"table", "| a | b |\n|:--|--:|\n| 1 | `2` |",
			"<table>\n<thead>\n<tr>\n<th align=\"left\">a</th>\n<th align=\"right\">b</th>\n</tr>\n</thead>\n" +
				"<tbody>\n<tr>\n<td align=\"left\">1</td>\n<td align=\"right\"><code>2</code></td>\n</tr>\n</tbody>\n</table>\n"},
		{"text escaped", `5 > 3 & "x" < 'y'`, "<p>5 &gt; 3 &amp; &quot;x&quot; &lt; 'y'</p>\n"},
		{"entities kept as characters", "&lt;b&gt; &amp; &copy;", "<p>&lt;b&gt; &amp; ©</p>\n"},
		{"NUL and invalid UTF-8", "a\x00b\xffc", "<p>a\uFFFDb\uFFFDc</p>\n"},
		{"empty", "", ""},

		// Callouts (§11).
		{"tip", "> **Tip:** run it twice\n> to be sure",
			"<aside class=\"callout callout-tip\">\n<p><strong>Tip:</strong> run it twice\nto be sure</p>\n</aside>\n"},
		{"note", "> **Note:** read-only", "<aside class=\"callout callout-note\">\n<p><strong>Note:</strong> read-only</p>\n</aside>\n"},
		{"warning with more blocks", "> **Warning:**\n> careful\n>\n> - one",
			"<aside class=\"callout callout-warning\">\n<p><strong>Warning:</strong>\ncareful</p>\n<ul>\n<li>one</li>\n</ul>\n</aside>\n"},
		{"label not first", "> Hey **Tip:** x", "<blockquote>\n<p>Hey <strong>Tip:</strong> x</p>\n</blockquote>\n"},
		{"other label", "> **Hint:** x", "<blockquote>\n<p><strong>Hint:</strong> x</p>\n</blockquote>\n"},
		{"label with more bold", "> **Tip: this** x", "<blockquote>\n<p><strong>Tip: this</strong> x</p>\n</blockquote>\n"},
		{"underscore bold is not the label", "> __Tip:__ x", "<blockquote>\n<p><strong>Tip:</strong> x</p>\n</blockquote>\n"},
		{"lower case", "> **tip:** x", "<blockquote>\n<p><strong>tip:</strong> x</p>\n</blockquote>\n"},
		{"callout inside a list", "- > **Note:** n",
			"<ul>\n<li>\n<aside class=\"callout callout-note\">\n<p><strong>Note:</strong> n</p>\n</aside>\n</li>\n</ul>\n"},
		{"quote inside a callout", "> **Tip:** a\n>\n> > b",
			"<aside class=\"callout callout-tip\">\n<p><strong>Tip:</strong> a</p>\n<blockquote>\n<p>b</p>\n</blockquote>\n</aside>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(render.Markdown(tt.src, render.Options{}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Markdown(%q) (-want +got):\n%s", tt.src, diff)
			}
			if err := checkSafe(got); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestMarkdownHostile renders what an attacker would write (§15).
func TestMarkdownHostile(t *testing.T) {
	tests := []struct {
		name, src, want string
		image           func(string) (string, bool)
	}{
		{name: "script block", src: "<script>alert(1)</script>", want: "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"},
		{name: "script inline", src: "hi <script>alert(1)</script> there", want: "<p>hi &lt;script&gt;alert(1)&lt;/script&gt; there</p>\n"},
		{name: "script inside a list", src: "- <script>alert(1)</script>", want: "<ul>\n<li>\n<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n</li>\n</ul>\n"},
		{name: "img onerror block", src: "<img src=x onerror=alert(1)>", want: "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"},
		{name: "img onerror inline", src: "a <img src=x onerror=alert(1)> b", want: "<p>a &lt;img src=x onerror=alert(1)&gt; b</p>\n"},
		{name: "html block kept as written", src: "<div onclick=\"x()\">\n*hi*\n</div>", want: "<p>&lt;div onclick=&quot;x()&quot;&gt;\n*hi*\n&lt;/div&gt;</p>\n"},
		{name: "comment", src: "a <!-- hidden --> b", want: "<p>a &lt;!-- hidden --&gt; b</p>\n"},
		{name: "inline html over two lines", src: "a <b\nc=\"d\">e</b>", want: "<p>a &lt;b\nc=&quot;d&quot;&gt;e&lt;/b&gt;</p>\n"},
		{name: "javascript link", src: "[x](javascript:alert(1))", want: "<p>x</p>\n"},
		{name: "mixed case scheme", src: "[x](JaVaScRiPt:alert(1))", want: "<p>x</p>\n"},
		{name: "leading space", src: "[x]( javascript:alert(1))", want: "<p>x</p>\n"},
		{name: "angle destination with space", src: "[x](< javascript:alert(1)>)", want: "<p>x</p>\n"},
		{name: "entity in scheme", src: "[x](&#106;avascript:alert(1))", want: "<p>x</p>\n"},
		{name: "named entity colon", src: "[x](javascript&colon;alert(1))", want: "<p>x</p>\n"},
		{name: "tab in scheme", src: "[x](<java\tscript:alert(1)>)", want: "<p>x</p>\n"},
		{name: "tab entity in scheme", src: "[x](java&#9;script:alert(1))", want: "<p>x</p>\n"},
		{name: "percent in scheme", src: "[x](%6Aavascript:alert(1))", want: "<p>x</p>\n"},
		{name: "percent-encoded colon", src: "[x](javascript%3Aalert(1))", want: "<p>x</p>\n"},
		{name: "backslash escape", src: `[x](javascript\:alert(1))`, want: "<p>x</p>\n"},
		{name: "reference to javascript", src: "[x][r]\n\n[r]: javascript:alert(1)", want: "<p>x</p>\n"},
		{name: "link text keeps its markup", src: "[**x**](javascript:alert(1))", want: "<p><strong>x</strong></p>\n"},
		{name: "vbscript", src: "[x](vbscript:msgbox(1))", want: "<p>x</p>\n"},
		{name: "file", src: "[x](file:///etc/passwd)", want: "<p>x</p>\n"},
		{name: "data", src: "[x](data:text/html,<script>alert(1)</script>)", want: "<p>x</p>\n"},
		{name: "data base64", src: "[x](data:text/html;base64,PHNjcmlwdD4=)", want: "<p>x</p>\n"},
		{name: "javascript autolink", src: "<javascript:alert(1)>", want: "<p>javascript:alert(1)</p>\n"},
		{name: "data autolink", src: "<data:text/html,x>", want: "<p>data:text/html,x</p>\n"},
		{name: "attribute injection", src: `[x](https://a.example/"onmouseover="alert(1))`,
			want: `<p><a href="https://a.example/%22onmouseover=%22alert(1)" rel="nofollow noopener">x</a></p>` + "\n"},
		{name: "attribute injection in title", src: `[x](/a 'a" onmouseover="alert(1)')`,
			want: `<p><a href="/a" title="a&quot; onmouseover=&quot;alert(1)" rel="nofollow noopener">x</a></p>` + "\n"},
		{name: "image without Image", src: "![a](https://evil.example/x.png)", want: "<p><span>a</span></p>\n"},
		{name: "foreign image", src: "![a](https://evil.example/x.png)", image: projectImages, want: "<p><span>a</span></p>\n"},
		{name: "other project's image", src: "![a](/projects/p2/images/img_1)", image: projectImages, want: "<p><span>a</span></p>\n"},
		{name: "javascript image", src: "![a](javascript:alert(1))", image: projectImages, want: "<p><span>a</span></p>\n"},
		{name: "image alt injection", src: `![a" onerror="alert(1)](/projects/p1/images/img_1)`, image: projectImages,
			want: `<p><img src="/projects/p1/images/img_1" alt="a&quot; onerror=&quot;alert(1)"></p>` + "\n"},
		{name: "image src injection", src: `![a](</projects/p1/images/x" onerror="alert(1)>)`, image: projectImages,
			want: `<p><img src="/projects/p1/images/x&quot; onerror=&quot;alert(1)" alt="a"></p>` + "\n"},
		{name: "Image gives a javascript src", src: "![a](/x)", image: func(string) (string, bool) { return "javascript:alert(1)", true },
			want: "<p><span>a</span></p>\n"},
		{name: "Image gives a data src", src: "![a](/x)", image: func(string) (string, bool) { return " DATA:image/svg+xml,<svg>", true },
			want: "<p><span>a</span></p>\n"},
		{name: "Image gives a mailto src", src: "![a](/x)", image: func(string) (string, bool) { return "mailto:a@b.example", true },
			want: "<p><span>a</span></p>\n"},
		{name: "image alt is text only", src: "![a <b>x</b> [l](https://a.example) `c`](https://evil.example/x.png)",
			want: "<p><span>a &lt;b&gt;x&lt;/b&gt; l c</span></p>\n"},
		{name: "image inside a refused link", src: "[![a](/projects/p1/images/i)](javascript:alert(1))", image: projectImages,
			want: `<p><img src="/projects/p1/images/i" alt="a"></p>` + "\n"},
		{name: "style tag", src: "<style>body{display:none}</style>", want: "<p>&lt;style&gt;body{display:none}&lt;/style&gt;</p>\n"},
		{name: "iframe", src: `<iframe src="https://evil.example"></iframe>`, want: "<p>&lt;iframe src=&quot;https://evil.example&quot;&gt;&lt;/iframe&gt;</p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(render.Markdown(tt.src, render.Options{Image: tt.image}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Markdown(%q) (-want +got):\n%s", tt.src, diff)
			}
			if err := checkSafe(got); err != nil {
				t.Error(err)
			}
			if strings.Contains(strings.ToLower(got), "<script") {
				t.Errorf("Markdown(%q) = %q: a <script tag", tt.src, got)
			}
			tags, err := parseTags(got)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range tags {
				for _, a := range tg.attrs {
					if strings.HasPrefix(a[0], "on") {
						t.Errorf("Markdown(%q) = %q: attribute %s on <%s>", tt.src, got, a[0], tg.name)
					}
					if a[0] == "href" && strings.Contains(strings.ToLower(html.UnescapeString(a[1])), "javascript:") {
						t.Errorf("Markdown(%q) = %q: javascript: in href", tt.src, got)
					}
				}
			}
		})
	}
}

func TestMarkdownImages(t *testing.T) {
	var seen []string
	image := func(dest string) (string, bool) {
		seen = append(seen, dest)
		return projectImages(dest)
	}
	got := string(render.Markdown(`![shot *one*](/projects/p1/images/a\_b&amp;c "The \"view\"") and ![x](https://evil.example/x.png)`,
		render.Options{Image: image}))
	want := `<p><img src="/projects/p1/images/a_b&amp;c" alt="shot one" title="The &quot;view&quot;"> and <span>x</span></p>` + "\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendering (-want +got):\n%s", diff)
	}
	// Image sees each destination decoded, once, in document order.
	if diff := cmp.Diff([]string{"/projects/p1/images/a_b&c", "https://evil.example/x.png"}, seen); diff != "" {
		t.Errorf("destinations passed to Image (-want +got):\n%s", diff)
	}
}

// TestCheckSafe shows that checkSafe, on which the tests above and the fuzz
// test rely, does refuse what must never come out.
func TestCheckSafe(t *testing.T) {
	bad := []string{
		"<script>alert(1)</script>",
		"<SCRIPT>",
		`<p onclick="x">`,
		`<img src="x" onerror="alert(1)">`,
		`<a href="javascript:alert(1)" rel="nofollow noopener">`,
		`<a href="JAVA&#x09;SCRIPT&colon;alert(1)" rel="nofollow noopener">`,
		`<a href="/x">`,
		`<img src="data:image/png;base64,AA" alt="">`,
		`<div>`,
		`<p class=x>`,
		"a > b",
		"<p",
		`<aside class="callout callout-evil">`,
		`<td style="color:red">`,
	}
	for _, s := range bad {
		if checkSafe(s) == nil {
			t.Errorf("checkSafe(%q) = nil, want an error", s)
		}
	}
	good := `<p><a href="https://a.example/?q=1&amp;r" rel="nofollow noopener">x</a> <img src="/i" alt="&quot;"></p>` + "\n"
	if err := checkSafe(good); err != nil {
		t.Errorf("checkSafe(%q) = %v, want nil", good, err)
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{
		"# h\n\n**b** *e* ~~d~~ `c`\n\n- a\n1. b\n\n> q\n\n> **Tip:** t\n\n```go\nx\n```\n\n    y\n\n---\n",
		"[x](https://a.example \"t\") <https://a.example> <a@b.example> ![i](/projects/p1/images/i)",
		"| a | b |\n|:-:|--:|\n| <b> | [x](javascript:1) |",
		"<script>alert(1)</script>", "a <img src=x onerror=alert(1)>", "[x](&#106;avascript:alert(1))",
		"[x](<java\tscript:1>)", "<javascript:alert(1)>", `[x](https://a.example/"onmouseover="alert(1))`,
		`![a" onerror="x](/projects/p1/images/"x)`, "&#0;&#x0; \x00 \xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, o := range []render.Options{{}, {Image: projectImages}} {
			got := string(render.Markdown(src, o))
			if err := checkSafe(got); err != nil {
				t.Fatalf("Markdown(%q) = %q: %v", src, got, err)
			}
			if again := string(render.Markdown(src, o)); again != got {
				t.Fatalf("Markdown(%q) gave %q, then %q", src, got, again)
			}
		}
	})
}

// tag is one start or end tag found in rendered HTML.
type tag struct {
	name    string
	end     bool
	attrs   [][2]string // name, raw value
	written string
}

// tagRE matches a tag the way the renderer writes one: a lower-case name and
// attributes that are all name="value", with no quote or bracket in a value.
var tagRE = regexp.MustCompile(`^<(/?)([a-z][a-z0-9]*)((?: [a-z]+="[^"<>]*")*)>`)

var attrRE = regexp.MustCompile(` ([a-z]+)="([^"]*)"`)

var schemeRE = regexp.MustCompile(`^([a-z][a-z0-9+.-]*):`)

// parseTags returns the tags in out, and an error if a '<' starts anything
// else or a '>' appears outside a tag.
func parseTags(out string) ([]tag, error) {
	var tags []tag
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '>':
			return nil, fmt.Errorf("%q: '>' outside a tag at %d", out, i)
		case '<':
			m := tagRE.FindStringSubmatch(out[i:])
			if m == nil {
				return nil, fmt.Errorf("%q: '<' at %d starts no well-formed tag", out, i)
			}
			tg := tag{name: m[2], end: m[1] == "/", written: m[0]}
			for _, a := range attrRE.FindAllStringSubmatch(m[3], -1) {
				tg.attrs = append(tg.attrs, [2]string{a[1], a[2]})
			}
			tags = append(tags, tg)
			i += len(m[0]) - 1
		}
	}
	return tags, nil
}

// checkSafe returns an error unless out has only the elements and attributes
// the renderer may write, with link and image URLs of allowed schemes.
func checkSafe(out string) error {
	if strings.Contains(strings.ToLower(out), "<script") {
		return fmt.Errorf("%q: <script", out)
	}
	tags, err := parseTags(out)
	if err != nil {
		return err
	}
	// The attributes each element may carry, and the values they may take
	// ("" for any value; URLs are checked below).
	allowed := map[string]map[string]*regexp.Regexp{
		"a":     {"href": nil, "title": nil, "rel": regexp.MustCompile(`^nofollow noopener$`)},
		"img":   {"src": nil, "alt": nil, "title": nil},
		"code":  {"class": regexp.MustCompile(`^language-`)},
		"aside": {"class": regexp.MustCompile(`^callout callout-(tip|note|warning)$`)},
		"ol":    {"start": regexp.MustCompile(`^[0-9]+$`)},
		"th":    {"align": regexp.MustCompile(`^(left|right|center)$`)},
		"td":    {"align": regexp.MustCompile(`^(left|right|center)$`)},
	}
	for _, n := range strings.Fields("p h1 h2 h3 h4 h5 h6 strong em del ul li blockquote pre hr br span table thead tbody tr") {
		allowed[n] = nil
	}
	for _, tg := range tags {
		attrs, ok := allowed[tg.name]
		if !ok {
			return fmt.Errorf("%q: element %s", out, tg.written)
		}
		if tg.end && len(tg.attrs) > 0 {
			return fmt.Errorf("%q: end tag with attributes %s", out, tg.written)
		}
		names := map[string]bool{}
		for _, a := range tg.attrs {
			re, ok := attrs[a[0]]
			if !ok || names[a[0]] {
				return fmt.Errorf("%q: attribute %s in %s", out, a[0], tg.written)
			}
			names[a[0]] = true
			v := html.UnescapeString(a[1])
			if re != nil && !re.MatchString(v) {
				return fmt.Errorf("%q: %s=%q in %s", out, a[0], v, tg.written)
			}
			if (a[0] == "href" || a[0] == "src") && !safeURL(v, a[0] == "href") {
				return fmt.Errorf("%q: %s=%q in %s", out, a[0], v, tg.written)
			}
		}
		if tg.name == "a" && !tg.end && (!names["href"] || !names["rel"]) {
			return fmt.Errorf("%q: <a> without href and rel: %s", out, tg.written)
		}
	}
	return nil
}

// safeURL reports whether a browser would read u as relative or as http or
// https (and mailto, for links).
func safeURL(u string, link bool) bool {
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	u = strings.ToLower(strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	m := schemeRE.FindStringSubmatch(u)
	if m == nil {
		return true
	}
	return m[1] == "http" || m[1] == "https" || (link && m[1] == "mailto")
}
