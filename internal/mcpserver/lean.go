package mcpserver

import (
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/hub"
)

// The lean path (DESIGN.md §17) serves tools/call of the hot tools —
// send_message, check_inbox and wait_for_messages — without the SDK's
// per-request session, which costs several times the tool itself. It
// speaks exactly the wire the SDK would: it takes only requests whose every
// part it understands, runs the same handler (callTool), and encodes the
// result with the SDK's own types and encoder. Anything else — another
// method or tool, a batch, an unusual header, id or _meta, any malformed
// part — goes to the SDK unchanged, so every error stays the SDK's.
var leanTools = []string{"send_message", "check_inbox", "wait_for_messages"}

// Protocol versions the lean path serves: the modern era, and the older
// ones the SDK serves statelessly without an initialize.
const modernVersion = "2026-07-28"

var olderVersions = []string{"", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// leanCall is a tools/call request the lean path takes.
type leanCall struct {
	prof   *profile
	id     jsonrpc.ID
	tool   toolDef
	args   json.RawMessage
	modern bool
}

// lean wraps the SDK's handler next with the lean path.
func (s *Server) lean(p *profile, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !s.leanHeaders(r) {
			next.ServeHTTP(w, r)
			return
		}
		// oneMessage read a body within maxBody whole; a longer one goes
		// to the SDK, for its own 413.
		if rb, ok := r.Body.(*readBody); ok {
			if c, ok := s.parseLean(p, r.Header, rb.whole); ok {
				s.leans.Add(1)
				s.serveLean(w, r, c)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// leanHeaders reports whether the request's headers are ones the SDK
// would accept for a tools/call of either era: loopback Host on a
// loopback listener, JSON content, an Accept naming both JSON and event
// streams, a served protocol version and no Mcp-Param-* headers.
func (s *Server) leanHeaders(r *http.Request) bool {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopback(la.String()) && !isLoopback(r.Host) {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	jsonOK, streamOK := false, false
	for _, v := range r.Header.Values("Accept") {
		for t := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	if !jsonOK || !streamOK {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	v := r.Header.Get("Mcp-Protocol-Version")
	return v == modernVersion || slices.Contains(olderVersions, v)
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// parseLean takes a body that is exactly one tools/call request of a lean
// tool, with nothing the lean path does not understand.
func (s *Server) parseLean(p *profile, h http.Header, body []byte) (*leanCall, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || len(msg) != 4 ||
		string(msg["jsonrpc"]) != `"2.0"` || string(msg["method"]) != `"tools/call"` {
		return nil, false
	}
	c := &leanCall{prof: p, modern: h.Get("Mcp-Protocol-Version") == modernVersion}
	var ok bool
	if c.id, ok = leanID(msg["id"]); !ok {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	var name string
	if json.Unmarshal(params["name"], &name) != nil || !slices.Contains(leanTools, name) {
		return nil, false
	}
	if c.tool, ok = p.tools[name]; !ok {
		return nil, false
	}
	c.args = params["arguments"]
	delete(params, "name")
	delete(params, "arguments")
	meta, hasMeta := params["_meta"]
	delete(params, "_meta")
	if len(params) > 0 || hasMeta != c.modern {
		return nil, false
	}
	if c.modern && !(h.Get("Mcp-Method") == "tools/call" && h.Get("Mcp-Name") == name && modernMeta(meta)) {
		return nil, false
	}
	return c, true
}

// leanID takes an id that is a string or an integer the SDK keeps exactly.
func leanID(raw json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, false
		}
		v = s
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return jsonrpc.ID{}, false
		}
		v = float64(n)
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// modernMeta takes the per-request _meta of the modern era: the version,
// the client's capabilities as an object, and optionally its name.
func modernMeta(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || string(m["io.modelcontextprotocol/protocolVersion"]) != `"`+modernVersion+`"` {
		return false
	}
	var caps map[string]any
	if json.Unmarshal(m["io.modelcontextprotocol/clientCapabilities"], &caps) != nil || caps == nil {
		return false
	}
	for k, v := range m {
		switch k {
		case "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities":
		case "io.modelcontextprotocol/clientInfo":
			var info mcp.Implementation
			if json.Unmarshal(v, &info) != nil || info.Name == "" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// serveLean runs the call and answers it as the SDK does in its JSON
// response mode; the modern era's result carries the server's info and
// resultType "complete". A tool that waits parks on this goroutine, and
// all else it does runs off it (callParked), its answer's encoding too.
func (s *Server) serveLean(w http.ResponseWriter, r *http.Request, c *leanCall) {
	var out []byte
	var err error
	if c.tool.parks != nil {
		res, cerr := s.callParked(r.Context(), c.prof, c.tool, c.args)
		hub.OffStack(func() { out, err = s.leanAnswer(c, res, cerr) })
	} else {
		res, cerr := s.callTool(r.Context(), c.prof, c.tool, c.args)
		out, err = s.leanAnswer(c, res, cerr)
	}
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// leanAnswer encodes the response to the call.
func (s *Server) leanAnswer(c *leanCall, res *mcp.CallToolResult, err error) ([]byte, error) {
	resp := &jsonrpc.Response{ID: c.id}
	if err == nil {
		if c.modern {
			res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: c.prof.impl}
		}
		resp.Result, err = res.MarshalJSON()
		if err == nil && c.modern {
			resp.Result = append(resp.Result[:len(resp.Result)-1], `,"resultType":"complete"}`...)
		}
	}
	if err != nil {
		s.log.Error("answering a tool call", "tool", c.tool.tool.Name, "err", err)
		resp.Result, resp.Error = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return jsonrpc.EncodeMessage(resp)
}
