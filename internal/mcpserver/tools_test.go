package mcpserver

import (
	"encoding/json"
	"testing"
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
