package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGroupHelp: palaver GROUP --help (and palaver help GROUP) lists the
// group's commands, one line each, and exits 0; palaver GROUP alone or with
// an unknown command prints the same list and exits 2.
func TestGroupHelp(t *testing.T) {
	ctx := context.Background()
	const agent = `Usage: palaver agent COMMAND [flags]

Commands:
  create   create an agent for its owner
  list     list agents, with their modes
  mode     set an agent's mode: active, review or listen
  public   make an agent public (anyone may talk to it), or private with --off
  a2a      expose an agent to A2A clients by an Agent Card, with its skills; --off takes the card away
  remote   remote A2A agents, which live elsewhere: add one by its Agent Card's URL, list, remove
  archive  archive an agent: its tokens stop working

Run palaver agent COMMAND --help for a command's arguments and flags.
`
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"agent", "--help"}, 0, agent},
		{[]string{"agent", "-h"}, 0, agent},
		{[]string{"help", "agent"}, 0, agent},
		{[]string{"agent"}, 2, agent},
		{[]string{"agent", "frob"}, 2, "palaver agent: unknown command \"frob\"\n\n" + agent},
	} {
		code, stdout, stderr := run(t, ctx, nil, tc.args...)
		if code != tc.code || stdout != "" {
			t.Errorf("palaver %v: exit %d, stdout %q; want exit %d", tc.args, code, stdout, tc.code)
		}
		if d := cmp.Diff(tc.stderr, stderr); d != "" {
			t.Errorf("palaver %v (-want +got):\n%s", tc.args, d)
		}
	}

	// Every group lists each of its commands; the top level lists groups.
	for group, verbs := range map[string][]string{
		"user":         {"create", "list", "password", "invite"},
		"token":        {"mint", "list", "revoke"},
		"approvals":    {"list", "approve", "reject", "answer"},
		"contact":      {"request", "approve", "reject", "cancel", "list"},
		"conversation": {"post", "resume", "close"},
		"webhook":      {"add", "list", "remove", "enable"},
		"project":      {"create", "list", "show", "update", "archive", "unarchive", "add-member", "remove-member", "add-agent", "remove-agent"},
	} {
		code, _, stderr := run(t, ctx, nil, group, "--help")
		var got []string
		_, list, _ := strings.Cut(stderr, "Commands:\n")
		list, _, _ = strings.Cut(list, "\n\n")
		for line := range strings.Lines(list) {
			got = append(got, strings.Fields(line)[0])
		}
		if d := cmp.Diff(verbs, got); code != 0 || d != "" {
			t.Errorf("palaver %s --help: exit %d (-want +got):\n%s\n%s", group, code, d, stderr)
		}
	}
	code, _, stderr := run(t, ctx, nil, "--help")
	for _, want := range []string{"\n  agent         agents: create, list, set the mode, make public, expose over A2A, add remote A2A agents, archive\n", "\n  conversation  ", "\n  export        export a conversation or a project, with provenance, as Markdown and JSON in a zip\n", "\n  version       print the version and VCS revision\n"} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("palaver --help: exit %d, lacks %q:\n%s", code, want, stderr)
		}
	}
}

// TestMissingFlags: a command left without required flags names every
// one on its own line, with its value and what it is, before it opens any
// database, and exits 2.
func TestMissingFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "mint"}, `palaver token mint: missing --agent SLUG: the agent's slug, for an agent token (plv_…); or give --owner
palaver token mint: missing --user OWNER: the agent's owner
Run palaver token mint --help for all its flags.
`},
		{[]string{"token", "mint", "--owner"}, `palaver token mint: missing --user OWNER: the agent's owner
Run palaver token mint --help for all its flags.
`},
		{[]string{"grant", "--agent", "planner"}, `palaver grant: missing --contact HANDLE: the contact's handle
palaver grant: missing --user HANDLE: the person acting
Run palaver grant --help for all its flags.
`},
		{[]string{"approvals", "answer", "q_1", "yes"}, `palaver approvals answer: missing --user HANDLE: the person acting
Run palaver approvals answer --help for all its flags.
`},
		{[]string{"project", "list"}, `palaver project list: missing --user HANDLE: the person acting
Run palaver project list --help for all its flags.
`},
		{[]string{"agent", "public", "--off"}, `palaver agent public: missing --agent SLUG: the agent's slug
palaver agent public: missing --user HANDLE: the person acting
Run palaver agent public --help for all its flags.
`},
		{[]string{"export", "--user", "alice"}, `palaver export: missing --conversation CONVERSATION_ID: the conversation to export; or give --project
Run palaver export --help for all its flags.
`},
		{[]string{"export"}, `palaver export: missing --conversation CONVERSATION_ID: the conversation to export; or give --project
palaver export: missing --user HANDLE: the person acting
Run palaver export --help for all its flags.
`},
	} {
		code, stdout, stderr := run(t, ctx, map[string]string{"PALAVER_DATABASE": "/nonexistent/palaver.db"}, tc.args...)
		if code != 2 || stdout != "" {
			t.Errorf("palaver %v: exit %d, stdout %q; want exit 2", tc.args, code, stdout)
		}
		if d := cmp.Diff(tc.want, stderr); d != "" {
			t.Errorf("palaver %v (-want +got):\n%s", tc.args, d)
		}
	}
}
