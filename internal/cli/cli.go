// Package cli is the palaver command (DESIGN.md §12): one file per
// subcommand. Admin subcommands act on the database directly, like the
// server does; call and wait speak MCP to a running server.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palaverhq/palaver/internal/config"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/notify"
	"github.com/palaverhq/palaver/internal/permissions"
	"github.com/palaverhq/palaver/internal/store"
)

// env is what a subcommand gets from the process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

type command struct {
	name, usage string
	run         func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the server", runServe},
		{"user", "people: create, list, set a password, invite", runUser},
		{"agent", "agents: create, list, set the mode, make public, expose over A2A, add remote A2A agents, archive", runAgent},
		{"token", "mint, list and revoke agents' tokens and people's API tokens", runToken},
		{"conversation", "close, resume, or post into a conversation as a person", runConversation},
		{"approvals", "decide what waits for a person: held messages, questions, requests", runApprovals},
		{"contact", "contact requests between people: request, approve, reject, cancel, list", runContact},
		{"project", "projects: create, list, show, update, archive; members and agents", runProject},
		{"grant", "set what an agent may reach of a contact", runGrant},
		{"webhook", "an agent's webhooks: add, list, remove, enable", runWebhook},
		{"export", "export a conversation or a project, with provenance, as Markdown and JSON in a zip", runExport},
		{"call", "call any tool over MCP: call TOOL 'JSON'", runCall},
		{"wait", "stream events as JSON lines", runWait},
		{"channel", "a stdio MCP server for Claude Code: the agent's tools, and its messages pushed as they arrive", runChannel},
		{"tools", "list the tools a server offers, or show one tool's arguments: tools [TOOL]", runTools},
		{"migrate", "apply database migrations", runMigrate},
		{"backup", "copy a SQLite database while the server runs: backup FILE", runBackup},
		{"restore", "put a SQLite backup back with the server stopped: restore FILE; after restoring PostgreSQL: restore --mark", runRestore},
		{"bench", "measure this machine's floors and the server under load", runBench},
		{"health", "ask a running server whether it is ready: exit 0 if so (for health checks)", runHealth},
		{"version", "print the version and VCS revision", runVersion},
	}
}

// errUsage marks an error already explained by usage text: exit status 2.
var errUsage = errors.New("usage")

// Main runs the palaver command and returns its exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 2 && args[0] == "help" {
		args = []string{args[1], "--help"} // palaver help COMMAND
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if strings.HasPrefix(args[0], "-") {
		moved, ok := flagsAfterCommand(args)
		if !ok {
			fmt.Fprintf(stderr, "palaver: %s is a flag of a command: give it after the command, like palaver serve %s\n", args[0], args[0])
			return 2
		}
		args = moved
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		case errors.Is(err, errToolFailed):
			return 1
		case errors.Is(err, errDenied):
			return 3
		}
		fmt.Fprintln(stderr, "palaver "+c.name+": "+message(err))
		return 1
	}
	fmt.Fprintf(stderr, "palaver: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// flagsAfterCommand moves flags given before the command (palaver
// --database X user create alice) to the end of its arguments, where the
// command's own flag set reads them; ok is false when no command follows.
func flagsAfterCommand(args []string) ([]string, bool) {
	for i, a := range args {
		for _, c := range commands() {
			if c.name == a {
				return append(slices.Clone(args[i:]), args[:i]...), true
			}
		}
	}
	return nil, false
}

// message is an error as a person should read it: a hub Error's message
// without its kind, its hint said as a command.
func message(err error) string {
	var he *hub.Error
	var ref *hub.Refusal
	switch {
	case errors.As(err, &he) && he.Kind != hub.KindInternal:
		return he.Text(nil, commandWay)
	case errors.As(err, &ref):
		return ref.Text(nil)
	}
	return err.Error()
}

// commandWay is the command line's way to do what a hint names (hub.Hint).
func commandWay(a hub.Action) string {
	switch a.Name {
	case hub.ActionApproveContact:
		return "with: palaver contact approve " + a.Args["handle"] + " --user " + a.Args["user"]
	case hub.ActionListApprovals:
		return "with: palaver approvals list --user " + a.Args["user"]
	case hub.ActionListTokens:
		return "with: palaver token list --user OWNER"
	case hub.ActionMintPersonToken:
		return "with: palaver token mint --user HANDLE --owner"
	case hub.ActionMintAgentToken:
		return "with: palaver token mint --user HANDLE --agent SLUG"
	case hub.ActionCreatePerson:
		return "with: palaver user create " + a.Args["handle"]
	}
	return "with: palaver --help"
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "palaver — a message hub for AI agents and the people who own them\n\nUsage: palaver COMMAND [flags]\n\nCommands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.usage)
	}
	fmt.Fprintln(w, "\nRun palaver COMMAND --help for a command's flags, or its commands.")
}

// newFlags makes a subcommand's flag set that reports errors to stderr.
func newFlags(e *env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("palaver "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: palaver %s\n", usage)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(e.stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses flags that may come before and after positional arguments,
// and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(fs *flag.FlagSet, pos []string, n int) error {
	if len(pos) != n {
		fs.Usage()
		return errUsage
	}
	return nil
}

// admin is an opened database and hub for an admin subcommand.
type admin struct {
	db  *store.DB
	hub *hub.Hub
	fs  *flag.FlagSet
	pos []string // positional arguments
}

// adminCommand runs an admin subcommand: it parses flags (with --database;
// flags registers the command's own) and exactly nargs positional
// arguments, opens the database the way the server does, and runs fn. A
// missing SQLite file is an error: only serve and migrate make one.
func adminCommand(ctx context.Context, e *env, args []string, usage string, nargs int, flags func(*flag.FlagSet), fn func(a *admin) error) error {
	return openAdmin(ctx, e, args, usage, nargs, false, flags, fn)
}

// openAdmin is adminCommand; with create it makes a missing SQLite file,
// saying where on stderr.
func openAdmin(ctx context.Context, e *env, args []string, usage string, nargs int, create bool, flags func(*flag.FlagSet), fn func(a *admin) error) error {
	fs := newFlags(e, commandName(usage), usage+" [--database PATH]")
	cfg := config.Default()
	cfg.DatabaseFlag(fs, e.getenv)
	if flags != nil {
		flags(fs)
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := requireFlags(e, fs); err != nil {
		return err
	}
	if err := wantArgs(fs, pos, nargs); err != nil {
		return err
	}
	isNew := create && newDatabase(cfg.Database)
	db, err := store.Open(ctx, store.Options{Database: cfg.Database, MustExist: !create, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return databaseErr(err)
	}
	defer db.Close()
	if isNew {
		fmt.Fprintf(e.stderr, "created a new database at %s\n", absPath(cfg.Database))
	}
	h, err := hub.New(ctx, hub.Options{Store: db, Waker: notify.NewLocal(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	h.KeepPermissions(permissions.New(h, db)) // approvals list and decide them
	return fn(&admin{db: db, hub: h, fs: fs, pos: pos})
}

// commandName is the words that name a command at the start of its usage:
// "token mint" of "token mint --user OWNER …".
func commandName(usage string) string {
	var words []string
	for _, w := range strings.Fields(usage) {
		if len(words) == 2 || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz-") != "" || strings.HasPrefix(w, "-") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// newDatabase reports whether database is a SQLite file not made yet.
func newDatabase(database string) bool {
	if store.IsPostgresURL(database) {
		return false
	}
	_, err := os.Stat(database)
	return errors.Is(err, iofs.ErrNotExist)
}

// absPath is path made absolute, for messages that say where a file is.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// databaseErr says what to do about a database that is not there.
func databaseErr(err error) error {
	if errors.Is(err, store.ErrNoDatabase) {
		return fmt.Errorf("%w: give the server's database with --database PATH or PALAVER_DATABASE=PATH (the default is ./palaver.db in the current folder); palaver serve or palaver migrate makes a new one", err)
	}
	return err
}

// userFlag registers --user, the person acting.
func userFlag(p *string) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { requiredFlag(fs, p, "user", "HANDLE", "the person acting") }
}

// requiredFlag registers a string flag that must be given, with its
// value's placeholder (HANDLE) and what it is; requireFlags checks it.
func requiredFlag(fs *flag.FlagSet, p *string, name, placeholder, what string) {
	fs.StringVar(p, name, "", "`"+placeholder+"`: "+what+" "+requiredMark)
}

// requiredMark ends the usage of a flag that must be given; a flag whose
// usage ends "(required unless --other)" may be left out when --other is
// given.
const requiredMark = "(required)"

// requireFlags prints one line for each required flag left out — naming
// it, its value and what it is — and returns errUsage if any was.
func requireFlags(e *env, fs *flag.FlagSet) error {
	missing := 0
	fs.VisitAll(func(f *flag.Flag) {
		if f.Value.String() != "" {
			return
		}
		placeholder, usage := flag.UnquoteUsage(f)
		what, ok := strings.CutSuffix(usage, " "+requiredMark)
		if !ok {
			i := strings.LastIndex(usage, " (required unless --")
			if i < 0 || !strings.HasSuffix(usage, ")") {
				return
			}
			other := fs.Lookup(strings.TrimSuffix(usage[i+len(" (required unless --"):], ")"))
			if other != nil && other.Value.String() != "" && other.Value.String() != "false" {
				return
			}
			what = usage[:i] + "; or give --" + other.Name
		}
		what = strings.TrimPrefix(what, placeholder+": ")
		fmt.Fprintf(e.stderr, "%s: missing --%s %s: %s\n", fs.Name(), f.Name, placeholder, what)
		missing++
	})
	if missing > 0 {
		fmt.Fprintf(e.stderr, "Run %s --help for all its flags.\n", fs.Name())
		return errUsage
	}
	return nil
}

// asPerson is adminCommand for what a person does: --user names them (it
// is required) and fn gets them resolved.
func asPerson(ctx context.Context, e *env, args []string, usage string, nargs int, flags func(*flag.FlagSet), fn func(a *admin, u *hub.User) error) error {
	var user string
	return adminCommand(ctx, e, args, usage, nargs,
		func(fs *flag.FlagSet) {
			userFlag(&user)(fs)
			if flags != nil {
				flags(fs)
			}
		},
		func(a *admin) error {
			u, err := a.person(ctx, user)
			if err != nil {
				return err
			}
			return fn(a, u)
		})
}

// person resolves the acting person's --user (requireFlags has seen that
// it was given).
func (a *admin) person(ctx context.Context, handle string) (*hub.User, error) {
	return a.hub.User(ctx, handle)
}

// verb is one subcommand of a group, like "create" of "palaver agent".
type verb struct {
	name, summary string
	run           func(ctx context.Context, e *env, args []string) error
}

// subcommand dispatches "palaver NAME VERB …" to a verb's function;
// "palaver NAME --help" lists the verbs, one line each.
func subcommand(ctx context.Context, e *env, name string, args []string, verbs []verb) error {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			groupUsage(e.stderr, name, verbs)
			return flag.ErrHelp
		}
		for _, v := range verbs {
			if v.name == args[0] {
				return v.run(ctx, e, args[1:])
			}
		}
		fmt.Fprintf(e.stderr, "palaver %s: unknown command %q\n\n", name, args[0])
	}
	groupUsage(e.stderr, name, verbs)
	return errUsage
}

func groupUsage(w io.Writer, name string, verbs []verb) {
	fmt.Fprintf(w, "Usage: palaver %s COMMAND [flags]\n\nCommands:\n", name)
	width := 0
	for _, v := range verbs {
		width = max(width, len(v.name))
	}
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-*s  %s\n", width, v.name, v.summary)
	}
	fmt.Fprintf(w, "\nRun palaver %s COMMAND --help for a command's arguments and flags.\n", name)
}
