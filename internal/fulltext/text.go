package fulltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The words search keeps of a text (§18), the same for the index and for a
// query, so that text that reads the same is found the same: each text is
// normalised to NFKC and case-folded (a decomposed é is the composed one,
// ｚｅｂｒａ is zebra, Straße is strasse), then split into words — runs of
// letters, digits and combining marks. Chinese, Japanese and Korean are
// written without spaces between words, so a run of their characters is
// kept as its overlapping pairs of characters (我明天去東京 is 我明 明天 天去
// 去東 東京), and its last character once more alone (京), so that a
// word of any length is found inside it: a query's run is the same pairs
// in a row, and a single character is the start of one. Both stores index
// Text's words as they are, split at spaces only.

// Text is text as the full-text index holds it (§18): its search words,
// NFKC and case-folded, CJK runs as pairs, separated by single spaces.
// Both stores index a message's summary and body through it.
func Text(text string) string {
	ts := searchTokens(text)
	var b strings.Builder
	b.Grow(len(text) + len(text)/2)
	for i, t := range ts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.word)
	}
	return b.String()
}

// searchToken is one word of a text as search keeps it, and where the text
// says it.
type searchToken struct {
	word       string // NFKC, case-folded: what the index and a query hold
	start, end int    // the bytes of the text it stands for
	firstEnd   int    // where the text of its first character ends
	cjk        bool   // part of a run of CJK characters
	tail       bool   // the run's last character again, alone
}

// normRune is a character of a text normalised: where it is in the
// normalised text, and the bytes of the text it comes from (a
// normalisation segment: one character and its marks, or a character that
// stands for several, like ㍿).
type normRune struct {
	r          rune
	at         int // its first byte in the normalised text
	start, end int
}

// normalise returns text NFKC and case-folded, and its characters, each
// with the bytes of text it comes from.
func normalise(text string) (string, []normRune) {
	var b strings.Builder
	b.Grow(len(text))
	rs := make([]normRune, 0, len(text))
	var fold *cases.Caser // made at the first character that is not ASCII
	var it norm.Iter
	it.InitString(norm.NFKC, text)
	for !it.Done() {
		start := it.Pos()
		seg := it.Next()
		end := it.Pos()
		if len(seg) == 1 && seg[0] < utf8.RuneSelf { // ASCII: folding is lower-casing
			c := seg[0]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			rs = append(rs, normRune{rune(c), b.Len(), start, end})
			b.WriteByte(c)
			continue
		}
		if r, n := utf8.DecodeRune(seg); n == len(seg) && caseless(r) {
			rs = append(rs, normRune{r, b.Len(), start, end})
			b.Write(seg)
			continue
		}
		if fold == nil {
			c := cases.Fold()
			fold = &c
		}
		// Folding can undo NFKC (a folded character that decomposes), so
		// the segment is normalised once more, as NFKC_Casefold does.
		for _, r := range norm.NFKC.String(fold.String(string(seg))) {
			rs = append(rs, normRune{r, b.Len(), start, end})
			b.WriteRune(r)
		}
	}
	return b.String(), rs
}

// caseless reports whether folding leaves r as it is, for certain: a
// letter of a script without case (Han, kana, Hangul, Arabic …), a mark or
// a digit. (The segments of a text norm.Iter hands over are NFKC already.)
func caseless(r rune) bool {
	return unicode.In(r, unicode.Lo, unicode.Mn, unicode.Nd)
}

// isWordRune reports whether r belongs to a word: letters, digits (and
// other numbers), combining marks and private-use characters.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Co, r)
}

// isCJK reports whether r is written without spaces between words: Han,
// Hiragana, Katakana (with its prolonged sound mark), Hangul and Bopomofo.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Bopomofo) || r == 'ー')
}

// searchTokens splits text into its search words, in order.
func searchTokens(text string) []searchToken {
	if ascii(text) {
		return asciiTokens(text)
	}
	ns, rs := normalise(text)
	out := make([]searchToken, 0, len(rs)/4)
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i].r) {
			i++
			continue
		}
		j := i
		for j < len(rs) && isWordRune(rs[j].r) {
			j++
		}
		// A word's CJK parts and its other parts are words of their own
		// (東京tower is 東京 and tower); a combining mark goes with the
		// character before it.
		for k := i; k < j; {
			cjk := isCJK(rs[k].r)
			l := k + 1
			for l < j && (isCJK(rs[l].r) == cjk || unicode.Is(unicode.Mn, rs[l].r)) {
				l++
			}
			out = appendWords(out, ns, rs[k:l], cjk)
			k = l
		}
		i = j
	}
	return out
}

// ascii reports whether s is all ASCII, which NFKC leaves as it is.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiTokens is searchTokens of ASCII text: its runs of letters and
// digits, lower-cased.
func asciiTokens(text string) []searchToken {
	out := make([]searchToken, 0, len(text)/6)
	for i := 0; i < len(text); {
		if !isWordRune(rune(text[i])) {
			i++
			continue
		}
		j, upper := i, false
		for ; j < len(text) && isWordRune(rune(text[j])); j++ {
			upper = upper || 'A' <= text[j] && text[j] <= 'Z'
		}
		word := text[i:j]
		if upper {
			word = strings.ToLower(word)
		}
		out = append(out, searchToken{word: word, start: i, end: j, firstEnd: i + 1})
		i = j
	}
	return out
}

// appendWords appends the words of one part of a word, rs of the
// normalised text ns: itself, or for CJK its overlapping pairs and its
// last character alone.
func appendWords(out []searchToken, ns string, rs []normRune, cjk bool) []searchToken {
	word := func(rs []normRune) searchToken {
		last := rs[len(rs)-1]
		return searchToken{word: ns[rs[0].at : last.at+utf8.RuneLen(last.r)], start: rs[0].start, end: last.end, firstEnd: rs[0].end, cjk: cjk}
	}
	if !cjk || len(rs) == 1 {
		return append(out, word(rs))
	}
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, word(rs[i:i+2]))
	}
	tail := word(rs[len(rs)-1:])
	tail.tail = true
	return append(out, tail)
}

// Words is a query's term as the words the index must hold one after the
// other: its search words, without the last CJK run's lone last character
// (in the text searched, more may follow it in the run).
func Words(text string) []string {
	ts := searchTokens(text)
	if n := len(ts); n > 0 && ts[n-1].tail {
		ts = ts[:n-1]
	}
	words := make([]string, len(ts))
	for i, t := range ts {
		words[i] = t.word
	}
	return words
}

// Prefix reports whether the phrase's last word is a single CJK character,
// which matches any indexed word it starts (§18): the character alone, or
// a pair it is the first of.
func (p Phrase) Prefix() bool {
	if len(p) == 0 {
		return false
	}
	r, n := utf8.DecodeRuneInString(p[len(p)-1])
	return n == len(p[len(p)-1]) && isCJK(r)
}
