package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// BenchmarkDecodeArgs measures decoding a send_message's arguments, the
// hot path's share of argument hygiene.
func BenchmarkDecodeArgs(b *testing.B) {
	var s Server
	var send toolDef
	for _, d := range s.defaultTools() {
		if d.tool.Name == "send_message" {
			send = d
		}
	}
	raw := json.RawMessage(`{"conversation_id":"conv_01m8rnw27k738mf89309dhyhtj","body":"benchmark ask 17","reply_to_seq":3,"client_msg_id":"c-17"}`)
	b.ReportAllocs()
	for b.Loop() {
		var in sendMessageIn
		if err := send.args.Decode(raw, &in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestArgumentsHavePlainTypes: every argument of every tool has one plain
// JSON type, never a list such as ["null","integer"], which strict clients
// (MCP Inspector's strict mode among them) refuse as unportable.
func TestArgumentsHavePlainTypes(t *testing.T) {
	var s Server
	for _, d := range append(s.defaultTools(), s.inboxTools()...) {
		for name, p := range d.tool.InputSchema.(*jsonschema.Schema).Properties {
			if p.Type == "" || len(p.Types) > 0 {
				t.Errorf("%s %s: type %q, types %q", d.tool.Name, name, p.Type, p.Types)
			}
		}
	}
}
