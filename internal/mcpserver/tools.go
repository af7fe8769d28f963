package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/input"
)

// call is one tool call in progress: who calls, which tool, and what the
// structured log line of a refusal or error should name.
type call struct {
	srv          *Server
	prof         *profile
	tool         string
	caller       *hub.Caller // an agent's call
	person       *hub.User   // a person's call (the rooms profile's user side)
	conversation string      // set by handlers that act on one conversation
}

// toolDef is one tool of the default profile: its wire description, the
// scope it needs (§2) and its handler over raw arguments.
type toolDef struct {
	tool    *mcp.Tool
	scope   string
	handler func(ctx context.Context, c *call, args json.RawMessage) (any, error)
	args    *input.Spec // how its arguments are read
	people  bool        // called with a person's token, not an agent's
	// parks, for a tool that waits (wait_for_messages), is its handler
	// taken apart at its waits (newParkingTool), which the lean path
	// parks on the request's own goroutine (callParked).
	parks func(ctx context.Context, c *call, args json.RawMessage) (parker, error)
}

// toolSpec is what a tool declares; the generic newTool turns it into a
// toolDef whose input schema is inferred from In.
type toolSpec struct {
	name, title, description, scope string
	readOnly, idempotent            bool
	people                          bool // for a person's token (no scopes)
	// schema adjusts the inferred input schema: defaults, enums, bounds.
	schema func(props map[string]*jsonschema.Schema)
}

// newTool builds a tool whose arguments decode into In by the hub's one
// strict reading (§4 input hygiene): exact names, each once, every integer
// within the range its schema declares, before the handler runs.
func newTool[In any](s toolSpec, fn func(ctx context.Context, c *call, in In) (any, error)) toolDef {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", s.name, err))
	}
	if s.schema != nil {
		s.schema(schema.Properties)
	}
	args := &input.Spec{Whole: "arguments", Part: "argument", Taker: "this tool", Ints: map[string]hub.Range{}}
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
		if p.Type == "integer" {
			if p.Minimum == nil || p.Maximum == nil {
				panic(fmt.Sprintf("tool %s: integer argument %s has no range", s.name, name))
			}
			args.Ints[name] = hub.Range{Min: int64(*p.Minimum), Max: int64(*p.Maximum)}
		}
	}
	switch {
	case s.people:
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
		scope:  s.scope,
		args:   args,
		people: s.people,
	}
	d.handler = func(ctx context.Context, c *call, raw json.RawMessage) (any, error) {
		var in In
		if err := args.Decode(raw, &in); err != nil {
			return nil, err
		}
		return fn(ctx, c, in)
	}
	return d
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
	withRange(p, "limit", page.Range())
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

// withRange bounds an integer property; every integer argument has one,
// and its arguments are checked against it as written.
func withRange(p map[string]*jsonschema.Schema, name string, r hub.Range) {
	p[name].Minimum, p[name].Maximum = new(float64(r.Min)), new(float64(r.Max))
}

// withMaxLength bounds a string property (in code points, like the hub).
func withMaxLength(p map[string]*jsonschema.Schema, name string, max int) {
	p[name].MaxLength = &max
}
