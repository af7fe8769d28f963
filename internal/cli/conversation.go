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
	fs := newFlags(e, "conversation close", "conversation close CONVERSATION_ID [--database PATH]")
	cfg := adminFlags(e, fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 1); err != nil {
		return err
	}
	a, err := openAdmin(ctx, *cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	c, err := a.hub.CloseConversation(ctx, pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "closed %s: it no longer exists for agents\n", c.ID)
	return nil
}
