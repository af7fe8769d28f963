package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/mcpclient"
)

// errToolFailed: the tool answered with an error result (already printed).
var errToolFailed = errors.New("tool error")

// errDenied: the tool answered status "denied" (already printed): a refusal
// that is part of the contract, like a brake.
var errDenied = errors.New("denied")

// dial reads the client environment and opens an MCP session to the server.
func dial(ctx context.Context, e *env) (*mcp.ClientSession, mcpclient.Env, error) {
	ce, err := mcpclient.ReadEnv(e.getenv)
	if err != nil {
		return nil, ce, err
	}
	s, err := ce.Connect(ctx, nil)
	return s, ce, err
}

// runCall: palaver call TOOL ['JSON'] prints the result's JSON; a tool error
// is printed the same way and exits 1.
func runCall(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "call", "call TOOL ['{\"arg\": …}' | - | @FILE]   (env PALAVER_URL, PALAVER_TOKEN, PALAVER_INSTANCE; - reads the JSON from stdin, @FILE from a file)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		fs.Usage()
		return errUsage
	}
	toolArgs := map[string]any{}
	if len(pos) == 2 && strings.TrimSpace(pos[1]) != "" {
		raw := []byte(pos[1])
		switch {
		case pos[1] == "-":
			if raw, err = io.ReadAll(e.stdin); err != nil {
				return fmt.Errorf("reading the arguments from stdin: %w", err)
			}
		case strings.HasPrefix(pos[1], "@"):
			if raw, err = os.ReadFile(pos[1][1:]); err != nil {
				return fmt.Errorf("reading the arguments: %w", err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&toolArgs); err != nil || dec.More() {
			where := ""
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				where = fmt.Sprintf(" (it breaks at character %d)", se.Offset)
			}
			fmt.Fprintf(e.stderr, "palaver call: the arguments of %s are not one JSON object%s; give them like '{\"limit\": 5}', or leave them out\n", pos[0], where)
			return errUsage
		}
	}
	s, ce, err := dial(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	r, err := mcpclient.CallTool(ctx, s, ce, pos[0], toolArgs)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if json.Indent(&out, mcpclient.ResultJSON(r), "", "  ") != nil {
		out.Write(mcpclient.ResultJSON(r))
	}
	out.WriteByte('\n')
	e.stdout.Write(out.Bytes())
	if r.IsError {
		return errToolFailed
	}
	var status struct{ Status string }
	if json.Unmarshal(mcpclient.ResultJSON(r), &status) == nil && status.Status == hub.StatusDenied {
		return errDenied
	}
	return nil
}

// runTools: palaver tools lists the server's tools; palaver tools NAME
// shows one tool's arguments, from the tool list the server serves.
func runTools(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "tools", "tools [TOOL]   (env PALAVER_URL, PALAVER_TOKEN)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fs.Usage()
		return errUsage
	}
	s, ce, err := dial(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		return ce.Err(err)
	}
	if len(pos) == 1 {
		i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == pos[0] })
		if i < 0 {
			return fmt.Errorf("the server at %s has no tool %q; palaver tools lists them", ce.URL, pos[0])
		}
		return describeTool(e.stdout, tools.Tools[i])
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, t := range tools.Tools {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, t.Title)
	}
	return tw.Flush()
}

// describeTool prints a tool's title and description, then one row per
// argument — required ones first, in the schema's order, then the rest by
// name — with its type, whether it is required, its default, its bounds
// and its description.
func describeTool(w io.Writer, t *mcp.Tool) error {
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		return fmt.Errorf("the input schema of %s: %w", t.Name, err)
	}
	title := t.Name
	if t.Title != "" {
		title += " — " + t.Title
	}
	fmt.Fprintf(w, "%s\n\n%s\n\n", title, t.Description)
	if len(schema.Properties) == 0 {
		fmt.Fprintln(w, "It takes no arguments.")
		return nil
	}
	names := slices.Clone(schema.Required)
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ARGUMENT\tTYPE\tREQUIRED\tDEFAULT\tBOUNDS\tDESCRIPTION")
	for _, name := range names {
		p := schema.Properties[name]
		required := "no"
		if slices.Contains(schema.Required, name) {
			required = "yes"
		}
		def := "-"
		if v, ok := p["default"]; ok {
			d, _ := json.Marshal(v)
			def = string(d)
		}
		desc, _ := p["description"].(string)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, schemaType(p), required, def, bounds(p), desc)
	}
	return tw.Flush()
}

// schemaType is a property's JSON type: "string", "array of string",
// "string or null".
func schemaType(p map[string]any) string {
	var types []string
	switch v := p["type"].(type) {
	case string:
		types = []string{v}
	case []any:
		for _, t := range v {
			if s, ok := t.(string); ok {
				types = append(types, s)
			}
		}
	}
	if len(types) == 0 {
		return "any"
	}
	if items, ok := p["items"].(map[string]any); ok && slices.Contains(types, "array") {
		for i, t := range types {
			if t == "array" {
				types[i] = "array of " + schemaType(items)
			}
		}
	}
	return strings.Join(types, " or ")
}

// bounds is what limits a property's values: "0-55", "≤200 chars",
// "1-10 items", "one of text|markdown"; "-" when nothing does.
func bounds(p map[string]any) string {
	num := func(key string) (string, bool) {
		v, ok := p[key].(float64)
		if !ok {
			return "", false
		}
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	span := func(lo, hi, unit string) string {
		least, hasLeast := num(lo)
		most, hasMost := num(hi)
		switch {
		case hasLeast && hasMost:
			return least + "-" + most + unit
		case hasLeast:
			return "≥" + least + unit
		case hasMost:
			return "≤" + most + unit
		}
		return ""
	}
	var out []string
	for _, b := range []string{span("minimum", "maximum", ""), span("minLength", "maxLength", " chars"), span("minItems", "maxItems", " items")} {
		if b != "" {
			out = append(out, b)
		}
	}
	if enum, ok := p["enum"].([]any); ok {
		var vs []string
		for _, v := range enum {
			vs = append(vs, fmt.Sprint(v))
		}
		out = append(out, "one of "+strings.Join(vs, "|"))
	}
	if pat, ok := p["pattern"].(string); ok {
		out = append(out, "matching "+pat)
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}
