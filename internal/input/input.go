// Package input is the one strict reading of a JSON object that the MCP,
// REST and A2A faces decode arguments, bodies and params with (DESIGN.md
// §4 input hygiene): exact names, each once, none the server sets,
// integers in range, wrong types refused in plain words. Every refusal is
// a hub.Error of kind invalid.
package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/palaverhq/palaver/internal/hub"
)

// Spec names what a face reads a JSON object as, for the words of its
// refusals: the MCP face reads a tool's arguments, the REST face a
// request's body. Decode is the one strict reading of either (§4 input
// hygiene).
type Spec struct {
	Whole string // the object: "arguments", "the body"
	Part  string // one of its names: "argument", "field"
	Taker string // what takes them: "this tool", "this route"
	// Ints bounds integer names; a number outside, or not written as an
	// integer, is refused before it is converted. An integer without an
	// entry must fit its Go type.
	Ints map[string]hub.Range
}

// setByServer are names no caller may pass: the server fills them (§4).
var setByServer = []string{"sender", "provenance", "authority"}

// Decode reads raw, one JSON object, into the struct dst points to. Names
// match dst's JSON names exactly (not in another case or by Unicode
// folding), each at most once; a name dst does not have is refused with
// the names it has; integers are checked as written against in.Ints; a
// value of the wrong type is refused in plain words, never a Go type's
// name. Empty input or null reads as {} (every part left out), and a part
// given as null is left out too. JSON decoding turns invalid UTF-8 and
// unpaired surrogates into U+FFFD. Every refusal is KindInvalid.
func (in *Spec) Decode(raw []byte, dst any) error {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return invalid("", "%s must be a JSON object", in.Whole)
	}
	if !json.Valid(raw) {
		return in.notJSON(raw)
	}
	fields := jsonFields(reflect.TypeOf(dst))
	// raw is valid JSON: walk its names and values without decoding them.
	var seen uint64 // by index in fields
	for i := 1; ; {
		i = skipSpace(raw, i)
		if raw[i] == '}' {
			break
		}
		if raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
		end := endOfString(raw, i)
		k, name := fieldOf(fields, raw[i:end])
		if k < 0 {
			return in.unknown(name, fields)
		}
		if seen&(1<<k) != 0 {
			return invalid("duplicate_argument", "%s %q is given more than once; give each %s once", in.Part, echo(name), in.Part)
		}
		seen |= 1 << k
		i = skipSpace(raw, skipSpace(raw, end)+1) // past the colon
		start := i
		i = endOfValue(raw, i)
		if r, ok := in.Ints[name]; ok && string(raw[start:i]) != "null" {
			if err := checkWritten(r, name, raw[start:i]); err != nil {
				return err
			}
		}
		if c := raw[start]; c == '{' || c == '[' {
			if again := RepeatedName(raw[start:i], 0); again != "" {
				return invalid("duplicate_argument", "%s %q gives the name %q more than once; give each name once", in.Part, name, echo(again))
			}
		}
	}
	err := json.Unmarshal(raw, dst)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		name, _, _ := strings.Cut(typeErr.Field, ".")
		f, _ := findField(fields, name)
		want := "something else"
		if f.typ != nil {
			want = plainType(f.typ)
		}
		got := plainValue(typeErr.Value)
		if f.typ != nil && f.typ != typeErr.Type && (f.typ.Kind() == reflect.Slice || f.typ.Kind() == reflect.Array) {
			got = "an array holding " + got
		}
		if want == "an integer" && strings.HasPrefix(typeErr.Value, "number") {
			return invalid("", "%s %q must be an integer written in digits that fits in %d bits, not %s", in.Part, name, typeErr.Type.Bits(), strings.TrimPrefix(typeErr.Value, "number "))
		}
		return invalid("", "%s %q must be %s, not %s", in.Part, name, want, got)
	}
	return in.syntax(err)
}

// fieldOf finds the field a JSON string (quotes and all) names: its index
// in fields and name, or -1 and the name as JSON reads it.
func fieldOf(fields []field, key []byte) (int, string) {
	for k, f := range fields {
		if len(key) == len(f.name)+2 && string(key[1:len(key)-1]) == f.name {
			return k, f.name
		}
	}
	if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
		return -1, string(key[1 : len(key)-1])
	}
	var name string
	json.Unmarshal(key, &name) // escapes, or bytes that become U+FFFD
	for k, f := range fields {
		if f.name == name {
			return k, name
		}
	}
	return -1, name
}

// notJSON is the refusal of input that is not one JSON value: where it
// breaks, or what follows the object.
func (in *Spec) notJSON(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(new(json.RawMessage)); err != nil {
		return in.syntax(err)
	}
	return invalid("", "%s must be one JSON object and nothing after it", in.Whole)
}

// RepeatedName finds a name given twice in one object of valid JSON raw,
// looking depth objects deep (0: all the way down); an array's items are
// as deep as the array. It returns the name, or "" when none repeats.
// encoding/json would quietly keep the last of them, so strict readers
// refuse instead (§4 input hygiene).
func RepeatedName(raw []byte, depth int) string {
	_, name := repeated(raw, skipSpace(raw, 0), depth)
	return name
}

// repeated walks the value at i: the index just past it, and the first
// repeated name in it within depth.
func repeated(raw []byte, i, depth int) (int, string) {
	switch raw[i] {
	case '[':
		i = skipSpace(raw, i+1)
		for raw[i] != ']' {
			var name string
			if i, name = repeated(raw, i, depth); name != "" {
				return i, name
			}
			if i = skipSpace(raw, i); raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		return i + 1, ""
	case '{':
		if depth == 1 {
			return endOfValue(raw, i), repeatedHere(raw, i)
		}
		if name := repeatedHere(raw, i); name != "" {
			return i, name
		}
		i = skipSpace(raw, i+1)
		for raw[i] != '}' {
			i = skipSpace(raw, skipSpace(raw, endOfString(raw, i))+1) // past the name and colon
			var name string
			if i, name = repeated(raw, i, max(depth-1, 0)); name != "" {
				return i, name
			}
			if i = skipSpace(raw, i); raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		return i + 1, ""
	}
	return endOfValue(raw, i), ""
}

// repeatedHere is the first name the object at i gives twice, or "".
// Names are compared as they are written unless escaped, so the common
// case copies nothing.
func repeatedHere(raw []byte, i int) string {
	var names [16][]byte
	seen := names[:0]
	i = skipSpace(raw, i+1)
	for raw[i] != '}' {
		end := endOfString(raw, i)
		name := raw[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var text string
			json.Unmarshal(raw[i:end], &text)
			name = []byte(text)
		}
		for _, n := range seen {
			if bytes.Equal(n, name) {
				return string(name)
			}
		}
		seen = append(seen, name)
		i = skipSpace(raw, endOfValue(raw, skipSpace(raw, skipSpace(raw, end)+1)))
		if raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return ""
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// endOfString returns the index just past the string of valid JSON that
// starts at i.
func endOfString(raw []byte, i int) int {
	for i++; raw[i] != '"'; i++ {
		if raw[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// endOfValue returns the index just past the value of valid JSON that
// starts at i.
func endOfValue(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return endOfString(raw, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch raw[i] {
			case '"':
				i = endOfString(raw, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(raw) && !strings.ContainsRune(",}] \t\r\n", rune(raw[i])) {
		i++
	}
	return i
}

func (in *Spec) syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid("", "%s must be valid JSON (it ends too soon)", in.Whole)
	}
	return invalid("", "%s must be valid JSON (%s)", in.Whole, strings.TrimPrefix(err.Error(), "json: "))
}

func (in *Spec) unknown(name string, fields []field) error {
	takes := "no " + in.Part + "s"
	if len(fields) > 0 {
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.name
		}
		takes = strings.Join(names, ", ")
	}
	msg := fmt.Sprintf("unknown %s %q: %s takes %s", in.Part, echo(name), in.Taker, takes)
	if slices.Contains(setByServer, name) {
		msg += " (sender, provenance and authority are set by the server)"
	}
	return &hub.Error{Kind: hub.KindInvalid, Code: "unknown_argument", Msg: msg}
}

// checkWritten checks a JSON value against r before it is converted: it
// must be an integer written in digits, within r.
func checkWritten(r hub.Range, name string, v json.RawMessage) error {
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n >= r.Min && n <= r.Max {
		return nil
	}
	return r.Refuse(name, writtenAs(v))
}

func invalid(code, format string, args ...any) *hub.Error {
	return &hub.Error{Kind: hub.KindInvalid, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// echo is a value someone gave, quoted in a refusal.
func echo(s string) string { return hub.Echo(s) }

// writtenAs shows a refused JSON value: a number or true/false as written
// (a long number by its length), anything else by its kind.
func writtenAs(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	if len(v) > 40 {
		return fmt.Sprintf("a number %d characters long", len(v))
	}
	return string(v)
}

// field is one name of a struct read from JSON, and its Go type.
type field struct {
	name string
	typ  reflect.Type
}

var fieldsCache sync.Map // reflect.Type → []field

// jsonFields lists, sorted by name, the fields of the struct t points to,
// named as encoding/json names them.
func jsonFields(t reflect.Type) []field {
	if v, ok := fieldsCache.Load(t); ok {
		return v.([]field)
	}
	var fs []field
	st := t.Elem()
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		fs = append(fs, field{name, f.Type})
	}
	if len(fs) > 64 {
		panic(fmt.Sprintf("%v: more than 64 fields to read from JSON", st)) // Decode keeps them in one uint64
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.name, b.name) })
	fieldsCache.Store(t, fs)
	return fs
}

func findField(fs []field, name string) (field, bool) {
	i, ok := slices.BinarySearchFunc(fs, name, func(f field, name string) int { return strings.Compare(f.name, name) })
	if !ok {
		return field{}, false
	}
	return fs[i], true
}

// plainType says what a Go type takes, in the words of JSON.
func plainType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch k := t.Kind(); {
	case k == reflect.String:
		return "a string"
	case k == reflect.Bool:
		return "true or false"
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage":
		return "JSON"
	case k == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "an array of strings"
	case k == reflect.Slice || k == reflect.Array:
		return "an array"
	case k == reflect.Map || k == reflect.Struct:
		return "an object"
	case k >= reflect.Int && k <= reflect.Uint64:
		return "an integer"
	case k == reflect.Float32 || k == reflect.Float64:
		return "a number"
	}
	return "something else"
}

// plainValue names a JSON value's kind as encoding/json reports it.
func plainValue(v string) string {
	switch {
	case v == "bool":
		return "true or false"
	case v == "array", v == "object":
		return "an " + v
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "":
		return "something else"
	}
	return "a " + v
}
