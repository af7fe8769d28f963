package cli

import (
	"context"

	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/channel"
)

// runChannel: palaver channel [--profile inbox|rooms] [--token-file PATH]
// [--state-file PATH] is a stdio MCP server for Claude Code, acting as one
// agent (§19): the agent's tools, and each event for its session pushed
// into Claude's context.
func runChannel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "channel", "channel [--profile inbox|rooms] [--token-file PATH] [--state-file PATH]   (env PALAVER_URL, PALAVER_TOKEN, PALAVER_INSTANCE; started by Claude Code, speaks MCP on stdin and stdout)")
	profile := fs.String("profile", "", "the tools to serve: inbox or rooms (default: the default profile's)")
	tokenFile := fs.String("token-file", "", "read the agent's token from this file instead of PALAVER_TOKEN")
	stateFile := fs.String("state-file", "", "keep the cursor here (default: one file per agent and session under $XDG_STATE_HOME/palaver/channel)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	return channel.Run(ctx, channel.Options{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr, Getenv: e.getenv,
		Profile: *profile, TokenFile: *tokenFile, StateFile: *stateFile, Version: build.Current().String()})
}
