package hub

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
)

// Input names what a face reads a JSON object as, for the words of its
// refusals: the MCP face reads a tool's arguments, the REST face a
// request's body. Decode is the one strict reading of either (§4 input
// hygiene).
type Input struct {
	Whole string // the object: "arguments", "the body"
	Part  string // one of its names: "argument", "field"
	Taker string // what takes them: "this tool", "this route"
	// Ints bounds integer names; a number outside, or not written as an
	// integer, is refused before it is converted. An integer without an
	// entry must fit its Go type.
	Ints map[string]Range
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
func (in *Input) Decode(raw []byte, dst any) error {
	raw = bytes.Trim(raw, " \t\r\n")
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return invalid("", "%s must be a JSON object", in.Whole)
	}
	fields := jsonFields(reflect.TypeOf(dst))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return in.syntax(err)
	}
	var seen []string
	var v json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return in.syntax(err)
		}
		name, _ := t.(string)
		if _, ok := findField(fields, name); !ok {
			return in.unknown(name, fields)
		}
		if slices.Contains(seen, name) {
			return invalid("duplicate_argument", "%s %q is given more than once; give each %s once", in.Part, name, in.Part)
		}
		seen = append(seen, name)
		if err := dec.Decode(&v); err != nil {
			return in.syntax(err)
		}
		if r, ok := in.Ints[name]; ok && string(v) != "null" {
			if err := r.checkWritten(name, v); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return in.syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("", "%s must be one JSON object and nothing after it", in.Whole)
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

func (in *Input) syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid("", "%s must be valid JSON (it ends too soon)", in.Whole)
	}
	return invalid("", "%s must be valid JSON (%s)", in.Whole, strings.TrimPrefix(err.Error(), "json: "))
}

func (in *Input) unknown(name string, fields []field) error {
	takes := "no " + in.Part + "s"
	if len(fields) > 0 {
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.name
		}
		takes = strings.Join(names, ", ")
	}
	msg := fmt.Sprintf("unknown %s %q: %s takes %s", in.Part, name, in.Taker, takes)
	if slices.Contains(setByServer, name) {
		msg += " (sender, provenance and authority are set by the server)"
	}
	return &Error{Kind: KindInvalid, Code: "unknown_argument", Msg: msg}
}

// checkWritten checks a JSON value against r before it is converted: it
// must be an integer written in digits, within r.
func (r Range) checkWritten(name string, v json.RawMessage) error {
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil && n >= r.Min && n <= r.Max {
		return nil
	}
	return r.refuse(name, writtenAs(v))
}

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
