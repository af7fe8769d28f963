package fulltext

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/rivo/uniseg"
)

// snippetFor is the snippet a search shows of body for a query of these
// words, each a term of its own.
func snippetFor(body string, words ...string) Snippet {
	q := &Query{}
	for _, w := range words {
		q.All = append(q.All, []Phrase{Words(w)})
	}
	return Cut(body, q)
}

func TestParseQuery(t *testing.T) {
	all := func(groups ...[]Phrase) [][]Phrase { return groups }
	p := func(words ...string) Phrase { return words }
	for _, c := range []struct {
		in   string
		want *Query
	}{
		{"retry", &Query{All: all([]Phrase{p("retry")})}},
		{"  Retry   LOGIC ", &Query{All: all([]Phrase{p("retry")}, []Phrase{p("logic")})}},
		{`"retry logic" store.go`, &Query{All: all([]Phrase{p("retry", "logic")}, []Phrase{p("store", "go")})}},
		{"deploy OR release staging", &Query{All: all([]Phrase{p("deploy"), p("release")}, []Phrase{p("staging")})}},
		{`a OR "b c" OR d`, &Query{All: all([]Phrase{p("a"), p("b", "c"), p("d")})}},
		{`deploy -staging -"dry run"`, &Query{All: all([]Phrase{p("deploy")}), Not: []Phrase{p("staging"), p("dry", "run")}}},
		{"or and not", &Query{All: all([]Phrase{p("or")}, []Phrase{p("and")}, []Phrase{p("not")})}},
		{"well-known - —  😀 x", &Query{All: all([]Phrase{p("well", "known")}, []Phrase{p("x")})}},
		{"-OR deploy", &Query{All: all([]Phrase{p("deploy")}), Not: []Phrase{p("or")}}},
		{"Ünïcode 日本語", &Query{All: all([]Phrase{p("ünïcode")}, []Phrase{p("日本", "本語")})}},
		// NFKC and case folding: a decomposed é is the composed one,
		// full-width letters are letters, ß folds to ss.
		{"re\u0301sume\u0301 ＺＥＢＲＡ Straße", &Query{All: all([]Phrase{p("résumé")}, []Phrase{p("zebra")}, []Phrase{p("strasse")})}},
		// CJK runs are their pairs in a row; a run inside a word is a
		// word of its own; one character alone starts a pair.
		{"東京 我明天去東京开会", &Query{All: all([]Phrase{p("東京")}, []Phrase{p("我明", "明天", "天去", "去東", "東京", "京开", "开会")})}},
		{"東京tower 東", &Query{All: all([]Phrase{p("東京", "京", "tower")}, []Phrase{p("東")})}},
	} {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
	}
}

// TestParseQueryRefusals: every query the language cannot read is
// refused saying what is wrong, how to write it, and the syntax.
func TestParseQueryRefusals(t *testing.T) {
	for _, c := range []struct{ in, code, says string }{
		{"", "invalid_query", "query is required"},
		{" \t ", "invalid_query", "query is required"},
		{`"retry logic`, "invalid_query", "not closed"},
		{`deploy "`, "invalid_query", "not closed"},
		{"-staging", "invalid_query", "only leaves out"},
		{`-staging -"dry run"`, "invalid_query", "only leaves out"},
		{"OR deploy", "invalid_query", "OR goes between two terms"},
		{"deploy OR", "invalid_query", "ends with it"},
		{"deploy OR OR release", "invalid_query", "OR goes between two terms"},
		{"deploy OR -staging", "invalid_query", "cannot be part of OR"},
		{"-staging OR deploy", "invalid_query", "cannot be part of OR"},
		{"!!! ... 😀", "invalid_query", "no word to look for"},
		{strings.Repeat("a ", 17), "invalid_query", "the limit is 16"},
		{strings.Repeat("é", MaxQuery+1), "too_long", "the limit is 500 characters"},
	} {
		_, err := Parse(c.in)
		e, ok := err.(*Error)
		if !ok || e.Code != c.code || !strings.Contains(e.Msg, c.says) {
			t.Errorf("%q: %v; want %s saying %q", c.in, err, c.code, c.says)
			continue
		}
		if c.code == "invalid_query" && !strings.HasSuffix(e.Msg, Syntax) {
			t.Errorf("%q: %q does not end with the syntax", c.in, e.Msg)
		}
	}
}

func TestSnippets(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 20)
	for _, c := range []struct {
		name, body string
		words      []string
		want       string
	}{
		{"a short body whole", "Please look at\n\nthe   retry logic.", []string{"retry"}, "Please look at the **retry** logic."},
		{"every matched word", "Retry, retry — RETRY!", []string{"retry"}, "**Retry**, **retry** — **RETRY**!"},
		{"nothing matched: the start", long + "end", []string{"absent"}, strings.Repeat("lorem ipsum dolor sit amet ", 5) + "lorem ipsum dolor sit…"},
		{"around the word", long + "the retry logic in store.go " + long, []string{"retry", "store"},
			"…sit amet lorem ipsum dolor sit amet the **retry** logic in **store**.go lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum…"},
		{"where most words are", "deploy " + long + "deploy now to staging " + long, []string{"deploy", "staging"},
			"…sit amet lorem ipsum dolor sit amet **deploy** now to **staging** lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor sit amet lorem ipsum dolor…"},
		// The body as stored, whatever form matched.
		{"decomposed, found composed", "Your Re\u0301sume\u0301, attached", []string{"résumé"}, "Your **Re\u0301sume\u0301**, attached"},
		{"full-width, found by ASCII", "ｚｅｂｒａ crossing ahead", []string{"zebra"}, "**ｚｅｂｒａ** crossing ahead"},
		{"a word inside a CJK run", "我明天去東京开会", []string{"東京"}, "我明天去**東京**开会"},
		{"a longer word inside it", "我明天去東京开会", []string{"東京开会"}, "我明天去**東京开会**"},
		{"one CJK character", "去東京，東", []string{"東"}, "去**東**京，**東**"},
		{"a CJK run cut anywhere", strings.Repeat("天", 200) + "東京" + strings.Repeat("地", 200), []string{"東京"},
			"…" + strings.Repeat("天", 40) + "**東京**" + strings.Repeat("地", 118) + "…"},
	} {
		got := snippetFor(c.body, c.words...).Marked()
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestSnippetsCutOnCharacters: whatever the script, a snippet is whole
// characters — whole grapheme clusters, an emoji family or a flag never
// split — at most SnippetLength of the body's and the "…" marks.
func TestSnippetsCutOnCharacters(t *testing.T) {
	for _, unit := range []string{"日本語の文章 ", "😀🎉 ", "é", "👩‍👩‍👧 ", "ab\u0301c ", "🇩🇪🇫🇷", "👩‍👩‍👧👍🏽", "e\u0301\u0323"} {
		for _, at := range []int{0, 37, 150, 400} {
			body := strings.Repeat(unit, 500/utf8.RuneCountInString(unit))
			runes := []rune(body)
			body = string(runes[:at]) + " needle " + string(runes[at:])
			s := snippetFor(body, "needle")
			text := s.String()
			if !utf8.ValidString(text) {
				t.Errorf("%q at %d: invalid UTF-8 %q", unit, at, text)
			}
			for _, p := range s {
				if !utf8.ValidString(p.Text) || !strings.Contains(body, strings.Trim(p.Text, "… ")) {
					t.Errorf("%q at %d: part %q is not a piece of the body", unit, at, p.Text)
				}
			}
			if n := utf8.RuneCountInString(strings.Trim(text, "…")); n > SnippetLength {
				t.Errorf("%q at %d: %d characters", unit, at, n)
			}
			if !strings.Contains(s.Marked(), "**needle**") {
				t.Errorf("%q at %d: %q does not mark the word", unit, at, s.Marked())
			}
			clusters := map[string]bool{}
			for g := uniseg.NewGraphemes(body); g.Next(); {
				clusters[g.Str()] = true
			}
			for g := uniseg.NewGraphemes(strings.Trim(text, "… ")); g.Next(); {
				if !clusters[g.Str()] {
					t.Errorf("%q at %d: %q cuts a character: %q is not one of the body's", unit, at, text, g.Str())
					break
				}
			}
		}
	}
}

// TestSearchText: the index's words of a text are the query's words of it
// (§18): NFKC, case-folded, CJK runs as overlapping pairs and their last
// character alone; a phrase ending in a single CJK character is a prefix.
func TestSearchText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Please review the retry logic in store.go", "please review the retry logic in store go"},
		{"Re\u0301sume\u0301 — RÉSUMÉ", "résumé résumé"},
		{"ｚｅｂｒａ ＺＥＢＲＡ① Straße", "zebra zebra1 strasse"},
		{"我明天去東京开会。", "我明 明天 天去 去東 東京 京开 开会 会"},
		{"東京tower 東 ｶﾞｲﾄﾞ", "東京 京 tower 東 ガイ イド ド"},
		{"서울에서 만나요", "서울 울에 에서 서 만나 나요 요"},
		{"😀 🎉 ...", ""},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		p    Phrase
		want bool
	}{{Phrase{"東"}, true}, {Phrase{"x", "東"}, true}, {Phrase{"東京"}, false}, {Phrase{"x"}, false}, {Phrase{"東", "x"}, false}, {nil, false}} {
		if got := c.p.Prefix(); got != c.want {
			t.Errorf("%q.Prefix() = %v; want %v", c.p, got, c.want)
		}
	}
}

// BenchmarkSearchText measures what indexing adds to a send (§17, §18):
// a message's search words, for a body of a typical length in ASCII, in
// a Latin script with accents, and in Chinese.
func BenchmarkSearchText(b *testing.B) {
	for name, body := range map[string]string{
		"ascii": "Please review the retry logic in store.go by Friday: the send that fails now waits a second and tries again, at most three times.",
		"latin": "Bitte prüfe die Wiederholungslogik in store.go bis Freitag: ein fehlgeschlagener Versand wartet jetzt eine Sekunde und versucht es höchstens dreimal.",
		"cjk":   "请在星期五之前检查store.go中的重试逻辑：失败的发送现在等待一秒钟后再试，最多三次。我明天去東京开会，后天回来。",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				Text(body)
			}
		})
	}
}
