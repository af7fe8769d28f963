package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// call is one tool call in progress: who calls, which tool, and what the
// structured log line of a refusal or error should name.
type call struct {
	srv          *Server
	prof         *profile
	tool         string
	caller       *hub.Caller
	conversation string // set by handlers that act on one conversation
}

// toolDef is one tool of the default profile: its wire description, the
// scope it needs (§2) and its handler over raw arguments.
type toolDef struct {
	tool    *mcp.Tool
	scope   string
	handler func(ctx context.Context, c *call, args json.RawMessage) (any, error)
	props   []string // argument names, for the unknown-argument message
}

// toolSpec is what a tool declares; the generic newTool turns it into a
// toolDef whose input schema is inferred from In.
type toolSpec struct {
	name, title, description, scope string
	readOnly, idempotent            bool
	// schema adjusts the inferred input schema: defaults, enums, bounds.
	schema func(props map[string]*jsonschema.Schema)
}

// newTool builds a tool whose arguments decode into In. Unknown arguments
// are refused by name (§4 input hygiene), before the handler runs.
func newTool[In any](s toolSpec, fn func(ctx context.Context, c *call, in In) (any, error)) toolDef {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", s.name, err))
	}
	if s.schema != nil {
		s.schema(schema.Properties)
	}
	for name, p := range schema.Properties {
		// An optional argument is left out, not sent as null: a plain type
		// is what strict clients take (an argument given as null is still
		// accepted, as left out).
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
		if err := fillBounds(p); err != nil {
			panic(fmt.Sprintf("tool %s: argument %s: %v", s.name, name, err))
		}
	}
	props := make([]string, 0, len(schema.Properties))
	for p := range schema.Properties {
		props = append(props, p)
	}
	slices.Sort(props)
	switch {
	case s.scope == "":
		s.description += " Any token may call it."
	case s.readOnly:
		s.description += " Read-only; needs scope " + s.scope + "."
	default:
		s.description += " Needs scope " + s.scope + "."
	}
	d := toolDef{
		tool: &mcp.Tool{
			Name: s.name, Title: s.title, Description: s.description, InputSchema: schema,
			Annotations: &mcp.ToolAnnotations{
				Title: s.title, ReadOnlyHint: s.readOnly, IdempotentHint: s.idempotent,
				DestructiveHint: new(false), OpenWorldHint: new(false),
			},
		},
		scope: s.scope,
		props: props,
	}
	d.handler = func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
		var in In
		if err := decodeArgs(raw, &in, props); err != nil {
			return nil, err
		}
		return fn(ctx, c, in)
	}
	return d
}

// decodeArgs decodes a tool's JSON arguments strictly: an argument the tool
// does not define is refused with its name, a wrong type with the expected
// one. JSON decoding turns invalid UTF-8 and unpaired surrogates into U+FFFD.
func decodeArgs(raw json.RawMessage, dst any, props []string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return hub.Errorf(hub.KindInvalid, "arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		if _, err := dec.Token(); err != io.EOF {
			return hub.Errorf(hub.KindInvalid, "arguments must be one JSON object")
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return hub.Errorf(hub.KindInvalid, "argument %q must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		takes := "no arguments"
		if len(props) > 0 {
			takes = strings.Join(props, ", ")
		}
		msg := fmt.Sprintf("unknown argument %s: this tool takes %s", name, takes)
		if slices.Contains([]string{`"sender"`, `"provenance"`, `"authority"`}, name) {
			msg += " (sender, provenance and authority are set by the server)"
		}
		return &hub.Error{Kind: hub.KindInvalid, Code: "unknown_argument", Msg: msg}
	}
	return hub.Errorf(hub.KindInvalid, "arguments are not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	if strings.HasPrefix(goKind, "int") || strings.HasPrefix(goKind, "uint") {
		return "an integer"
	}
	return "a " + goKind
}

// withDefault sets a property's default value.
func withDefault(p map[string]*jsonschema.Schema, name string, v any) {
	b, _ := json.Marshal(v)
	p[name].Default = b
}

// withEnum limits a string property to the given values.
func withEnum(p map[string]*jsonschema.Schema, name string, values ...string) {
	p[name].Enum = make([]any, len(values))
	for i, v := range values {
		p[name].Enum[i] = v
	}
}

// withPage gives a limit property its page's default and range.
func withPage(p map[string]*jsonschema.Schema, page hub.Page) {
	withDefault(p, "limit", page.Default)
	withRange(p, "limit", 1, page.Max)
}

// fillBounds writes a property's bounds into its description where it says
// {min} or {max}, so the words say the hub's numbers and never a copy.
func fillBounds(p *jsonschema.Schema) error {
	num := func(f *float64) string {
		if f == nil {
			return ""
		}
		return strconv.FormatFloat(*f, 'f', -1, 64)
	}
	upper := num(p.Maximum)
	if p.MaxLength != nil {
		upper = strconv.Itoa(*p.MaxLength)
	}
	for _, v := range []struct{ placeholder, value string }{{"{min}", num(p.Minimum)}, {"{max}", upper}} {
		if !strings.Contains(p.Description, v.placeholder) {
			continue
		}
		if v.value == "" {
			return fmt.Errorf("the description says %s but the schema sets none", v.placeholder)
		}
		p.Description = strings.ReplaceAll(p.Description, v.placeholder, v.value)
	}
	return nil
}

// withRange bounds an integer property.
func withRange(p map[string]*jsonschema.Schema, name string, min, max int) {
	p[name].Minimum, p[name].Maximum = new(float64(min)), new(float64(max))
}

// withMaxLength bounds a string property (in code points, like the hub).
func withMaxLength(p map[string]*jsonschema.Schema, name string, max int) {
	p[name].MaxLength = &max
}
