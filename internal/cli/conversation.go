package cli

import (
	"context"
	"flag"
	"fmt"
)

func runConversation(ctx context.Context, e *env, args []string) error {
	return subcommand(ctx, e, "conversation", args, []verb{
		{"post", "post into a conversation as a person", conversationPost},
		{"resume", "resume a paused conversation", conversationResume},
		{"close", "close a conversation", conversationClose},
	})
}

// conversationResume: palaver conversation resume CONVERSATION_ID --user OWNER
// — a person pressing Resume on a paused conversation.
func conversationResume(ctx context.Context, e *env, args []string) error {
	var user string
	return adminCommand(ctx, e, args, "conversation resume CONVERSATION_ID --user HANDLE", 1, userFlag(&user), func(a *admin) error {
		u, err := a.person(ctx, user)
		if err != nil {
			return err
		}
		c, err := a.hub.Resume(ctx, u, a.pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "resumed %s: its agents may write again\n", c.ID)
		return nil
	})
}

// conversationPost: palaver conversation post CONVERSATION_ID BODY --user
// HANDLE [--format markdown] — a person writing into a conversation.
func conversationPost(ctx context.Context, e *env, args []string) error {
	var user, format string
	return adminCommand(ctx, e, args, "conversation post CONVERSATION_ID BODY --user HANDLE [--format text|markdown]", 2,
		func(fs *flag.FlagSet) {
			userFlag(&user)(fs)
			fs.StringVar(&format, "format", "text", "text or markdown")
		},
		func(a *admin) error {
			u, err := a.person(ctx, user)
			if err != nil {
				return err
			}
			r, err := a.hub.PostAsPerson(ctx, u, a.pos[0], a.pos[1], format)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "posted %s as seq %d (%s) to %d recipients\n", r.Message.ID, r.Message.Seq, r.Message.Authority, r.Recipients)
			return nil
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
