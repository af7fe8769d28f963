package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/palaverhq/palaver/internal/hub"
)

// errToolFailed: the tool answered with an error result (already printed).
var errToolFailed = errors.New("tool error")

// errDenied: the tool answered status "denied" (already printed): a refusal
// that is part of the contract, like a brake.
var errDenied = errors.New("denied")

// clientEnv is how call and wait reach a server: PALAVER_URL (default the
// local server), PALAVER_TOKEN, PALAVER_INSTANCE.
type clientEnv struct {
	url, token, instance string
	refused              *string // why the server refused the token, once it has
}

func readClientEnv(e *env) (clientEnv, error) {
	c := clientEnv{url: e.getenv("PALAVER_URL"), token: strings.TrimSpace(e.getenv("PALAVER_TOKEN")), instance: e.getenv("PALAVER_INSTANCE"), refused: new(string)}
	if c.url == "" {
		c.url = "http://127.0.0.1:8420/mcp/"
	}
	switch {
	case c.token == "":
		return c, errors.New("PALAVER_TOKEN is not set: mint one with `palaver token mint --user OWNER --agent SLUG` and export PALAVER_TOKEN=plv_…")
	case strings.HasPrefix(c.token, "plu_") && !roomsEndpoint(c.url):
		return c, errors.New("PALAVER_TOKEN holds a person's API token (plu_…), which serves the REST API and the rooms profile's user side (PALAVER_URL=…/mcp/rooms/); here call and wait speak as an agent: mint an agent token with `palaver token mint --user OWNER --agent SLUG`")
	}
	return c, nil
}

// roomsEndpoint reports whether url is the rooms profile's endpoint, whose
// user side takes a person's token and which has no event stream (§10.5).
func roomsEndpoint(url string) bool {
	return strings.HasSuffix(strings.TrimSuffix(url, "/"), "/mcp/rooms")
}

// bearerTransport adds the Authorization header to every request.
type bearerTransport struct {
	token   string
	next    http.RoundTripper
	refused *string // the server's words when it refuses the token (401)
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusUnauthorized && t.refused != nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		*t.refused = strings.TrimSpace(string(b))
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	return resp, err
}

// dial reads the client environment and opens an MCP session to the server.
func dial(ctx context.Context, e *env) (*mcp.ClientSession, clientEnv, error) {
	ce, err := readClientEnv(e)
	if err != nil {
		return nil, ce, err
	}
	s, err := connect(ctx, ce)
	return s, ce, err
}

// connect opens an MCP client session to the server.
func connect(ctx context.Context, ce clientEnv) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "palaver-cli", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             ce.url,
		HTTPClient:           &http.Client{Transport: bearerTransport{token: ce.token, next: http.DefaultTransport, refused: ce.refused}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	s, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return nil, clientErr(ce, err)
	}
	return s, nil
}

// clientErr explains a failure to talk to the server.
func clientErr(ce clientEnv, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"):
		return fmt.Errorf("cannot reach a Palaver server at %s: is `palaver serve` running there? (set PALAVER_URL to its /mcp/ URL)", ce.url)
	case strings.Contains(msg, "Unauthorized"), strings.Contains(msg, "401"):
		why := "it is not a working agent token"
		if *ce.refused != "" {
			why = *ce.refused
		}
		return fmt.Errorf("the server at %s refused the token in PALAVER_TOKEN: %s (mint one on the agent's dashboard page or with `palaver token mint`)", ce.url, why)
	case strings.Contains(msg, "unknown tool"):
		return errors.New("unknown tool; list the tools with `palaver tools`")
	case strings.Contains(msg, "Not Found"):
		return fmt.Errorf("nothing answers MCP at %s (404): PALAVER_URL must be the server's MCP endpoint, like http://127.0.0.1:8420/mcp/", ce.url)
	}
	return fmt.Errorf("talking to %s: %w", ce.url, err)
}

// callTool calls a tool, adding PALAVER_INSTANCE as instance when the tool
// takes one and args do not name one.
func callTool(ctx context.Context, s *mcp.ClientSession, ce clientEnv, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if ce.instance != "" && args["instance"] == nil {
		tools, err := s.ListTools(ctx, nil)
		if err != nil {
			return nil, clientErr(ce, err)
		}
		if i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == name }); i >= 0 {
			if schema, ok := tools.Tools[i].InputSchema.(map[string]any); ok {
				if props, _ := schema["properties"].(map[string]any); props["instance"] != nil {
					args["instance"] = ce.instance
				}
			}
		}
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil && strings.Contains(err.Error(), "unknown tool") {
		return nil, fmt.Errorf("no tool is named %q; list the tools with `palaver tools`", name)
	}
	if err != nil {
		return nil, clientErr(ce, err)
	}
	return r, nil
}

// resultJSON is a result's structured content, or its text.
func resultJSON(r *mcp.CallToolResult) []byte {
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			return b
		}
	}
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return []byte(t.Text)
		}
	}
	return []byte("{}")
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
	r, err := callTool(ctx, s, ce, pos[0], toolArgs)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if json.Indent(&out, resultJSON(r), "", "  ") != nil {
		out.Write(resultJSON(r))
	}
	out.WriteByte('\n')
	e.stdout.Write(out.Bytes())
	if r.IsError {
		return errToolFailed
	}
	var status struct{ Status string }
	if json.Unmarshal(resultJSON(r), &status) == nil && status.Status == hub.StatusDenied {
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
		return clientErr(ce, err)
	}
	if len(pos) == 1 {
		i := slices.IndexFunc(tools.Tools, func(t *mcp.Tool) bool { return t.Name == pos[0] })
		if i < 0 {
			return fmt.Errorf("the server at %s has no tool %q; palaver tools lists them", ce.url, pos[0])
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
