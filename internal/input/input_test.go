package input_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
)

type fuzzIn struct {
	Body  string   `json:"body"`
	Seq   int64    `json:"seq"`
	Tags  []string `json:"tags,omitempty"`
	Flag  *bool    `json:"flag"`
	Extra json.RawMessage
}

// FuzzInputDecode holds Decode's walk over an object's names to a plain
// reading with encoding/json's tokens: the same names refused as unknown
// or repeated, the same integers refused, and otherwise what
// json.Unmarshal reads.
func FuzzInputDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"body":"x","seq":3}`, `{"body":"x","body":"y"}`, `{"Body":"x"}`, `{"b\u006fdy":"x"}`,
		`{"seq":0}`, `{"seq":1e3}`, `{"tags":["a","b"],"flag":null,"Extra":{"x":[1,{"y":"}"}]}}`,
		` { "body" : "a\"}b" , "seq" : 7 } `, `{"body":"x"}{}`, `[1]`, `{"\ud800":1}`, "{\"body\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	in := &input.Spec{Whole: "arguments", Part: "argument", Taker: "this tool", Ints: map[string]hub.Range{"seq": {Min: 1, Max: 99}}}
	names := []string{"Extra", "body", "flag", "seq", "tags"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got fuzzIn
		err := in.Decode(raw, &got)
		trimmed := bytes.Trim(raw, " \t\r\n")
		if !json.Valid(trimmed) || len(trimmed) == 0 || trimmed[0] != '{' {
			if err == nil && len(trimmed) > 0 && string(trimmed) != "null" {
				t.Fatalf("%q: read, want a refusal", raw)
			}
			return
		}
		// The plain reading: names by tokens, first refusal wins.
		var want error
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		dec.Token()
		var seen []string
		for dec.More() && want == nil {
			tok, _ := dec.Token()
			name := tok.(string)
			var v json.RawMessage
			dec.Decode(&v)
			switch {
			case !slices.Contains(names, name):
				want = errors.New("unknown_argument")
			case slices.Contains(seen, name):
				want = errors.New("duplicate_argument")
			case name == "seq" && string(v) != "null":
				if n, perr := json.Number(v).Int64(); perr != nil || n < 1 || n > 99 || bytes.ContainsAny(v, ".eE") {
					want = errors.New("invalid_argument")
				}
			}
			seen = append(seen, name)
		}
		var plain fuzzIn
		if want == nil {
			if uerr := json.Unmarshal(trimmed, &plain); uerr != nil {
				want = errors.New("invalid_argument")
			}
		}
		switch {
		case want == nil && err != nil:
			t.Fatalf("%q: refused (%v), want it read", raw, err)
		case want != nil && (err == nil || hub.AsError(err).WireCode() != want.Error()):
			t.Fatalf("%q: %v, want %s", raw, err, want)
		case want == nil:
			if diff := cmp.Diff(plain, got); diff != "" {
				t.Fatalf("%q read otherwise than json.Unmarshal (-plain +Decode):\n%s", raw, diff)
			}
		}
	})
}

// TestDecodeQuotesNamesShort: a refusal quotes an unknown or repeated name
// cut to a line, so a huge name never comes back whole.
func TestDecodeQuotesNamesShort(t *testing.T) {
	in := &input.Spec{Whole: "arguments", Part: "argument", Taker: "this tool"}
	long := strings.Repeat("k", 200000)
	for _, raw := range []string{`{"` + long + `":1}`, `{"` + long + `":1,"` + long + `":2}`} {
		var v fuzzIn
		err := in.Decode([]byte(raw), &v)
		if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), `"`+strings.Repeat("k", 60)+`…"`) {
			t.Errorf("a name of %d characters: %d bytes of error, %.120s…", len(long), len(fmt.Sprint(err)), fmt.Sprint(err))
		}
	}
}

func TestRepeatedName(t *testing.T) {
	for raw, want := range map[string]string{
		`{}`: "", `{"a":1,"b":{"a":2}}`: "", `{"a":1,"a":2}`: "a", `{"a":1,"\u0061":2}`: "a",
		`{"p":{"x":1,"x":2}}`: "x", `[{"a":1},{"a":1,"a":2}]`: "a", `{"p":[{"q":{"r":1,"r":2}}]}`: "r",
		` {"s":"}\"{","s":1}`: "s", `"text"`: "", `[1,2,[3]]`: "",
	} {
		if got := input.RepeatedName([]byte(raw), 0); got != want {
			t.Errorf("RepeatedName(%s) = %q, want %q", raw, got, want)
		}
	}
	// Depth bounds the walk: 1 is the object itself, 2 also the objects in it.
	deep := []byte(`{"a":{"b":{"c":1,"c":2}},"d":1}`)
	if input.RepeatedName(deep, 1) != "" || input.RepeatedName(deep, 2) != "" || input.RepeatedName(deep, 3) != "c" {
		t.Errorf("depths: %q %q %q", input.RepeatedName(deep, 1), input.RepeatedName(deep, 2), input.RepeatedName(deep, 3))
	}
}
