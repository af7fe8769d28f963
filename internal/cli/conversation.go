package cli

import (
	"context"
	"fmt"
)

func runConversation(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "conversation", args, map[string]func(context.Context, *env, []string) error{
		"close": conversationClose,
	})
}

// conversationClose: palaver conversation close CONVERSATION_ID — the
// owner's confirmation of a request_close (or a close without one).
func conversationClose(ctx context.Context, e *env, args []string) error {
	return adminCommand(ctx, e, args, "conversation close CONVERSATION_ID", 1, nil, func(a *admin) error {
		c, err := a.hub.CloseConversation(ctx, a.pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "closed %s: it no longer exists for agents\n", c.ID)
		return nil
	})
}
