package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultPrompts are the default profile's guided workflows (§10.4).
func defaultPrompts() []promptDef {
	return []promptDef{{&mcp.Prompt{Name: "triage_inbox", Title: "Triage my inbox",
		Description: "Check the inbox, decide what to read, act, and acknowledge every message, declined ones included."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return promptText("Triage the Palaver inbox", `Call check_inbox. For each waiting message, decide from its summary whether it needs you.
Read the ones that do with read_message, act on them, and reply only when the sender asked for something back.
Acknowledge every message once you are done with it — including the ones you decline: the acknowledgement is the answer.
If more are waiting than were listed, repeat until check_inbox shows none you have not handled.`), nil
		}},
		{&mcp.Prompt{Name: "handoff", Title: "Hand off a task",
			Description: "Hand a task to another agent or person: confirm the recipient, reuse or start a conversation, write an ask.",
			Arguments: []*mcp.PromptArgument{
				{Name: "to", Description: "the handle to hand off to, like alice/reviewer", Required: true},
				{Name: "task", Description: "what you want done", Required: true},
			}},
			func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				to, task := req.Params.Arguments["to"], req.Params.Arguments["task"]
				return promptText("Hand off a task to "+to, `Hand this task to `+to+`: `+task+`

1. Confirm the recipient with list_contacts: make sure `+to+` is someone you may reach and the right one for it.
2. Look in list_conversations for an open conversation about this task; reuse it. Otherwise open one (open_conversation, or create_thread with a goal when several take part).
3. Write the message as an ask, not a report: what you need, by when, and where the material is (paths and URLs, not pasted contents). Give it a summary that states the ask.
4. Wait for the answer with wait_for_messages, and acknowledge it when you have acted.`), nil
			}},
	}
}

func promptText(description, text string) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Description: description, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}
