// Package channel is palaver channel (DESIGN.md §19): a stdio MCP server
// that Claude Code starts, acting as one agent. It keeps a wait open on
// the Palaver server for its session and pushes each event for the
// session into Claude's context as a notifications/claude/channel, relays
// Claude Code's permission prompts to the agent's owner and their verdicts
// back, and serves the agent's tools by forwarding them to the server — so
// one .mcp.json entry gives both the tools and the wake-ups. It is a
// client of the server over HTTP, like palaver call and wait: it imports
// no hub and no store. It writes nothing but MCP to stdout and logs to
// stderr.
package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palaverhq/palaver/internal/mcpclient"
)

// Options configure Run.
type Options struct {
	Stdin  io.Reader // Claude Code's requests
	Stdout io.Writer // MCP only
	Stderr io.Writer // the log
	Getenv func(string) string
	// Profile is the tool surface forwarded: "" (the default profile),
	// "inbox" or "rooms". Waits and permission requests always go to the
	// default profile, where the event stream is.
	Profile string
	// TokenFile, when set, holds the agent's token instead of
	// PALAVER_TOKEN.
	TokenFile string
	// StateFile is where the cursor is kept ("": under the user's state
	// folder, one file per server, agent and session).
	StateFile string
	Version   string // the binary's, for serverInfo
}

// Channel is one run of palaver channel.
type Channel struct {
	o        Options
	env      mcpclient.Env // the default profile's endpoint
	tools    mcpclient.Env // the forwarded profile's
	log      io.Writer
	srv      *mcp.Server
	io       *stdio
	client   *mcp.Client
	statePth string

	mu       sync.Mutex
	events   *mcp.ClientSession // the default profile: waits, whoami, request_permission
	forward  *mcp.ClientSession // the forwarded profile's tools (events, with the default profile)
	listed   map[string]*mcp.Tool
	maxWait  int
	agent    string
	cursor   string
	fatal    error // the server refused the token
	ready    chan struct{}
	readyOne sync.Once
	opened   chan struct{} // the client initialized: pushes may begin
	openOne  sync.Once
}

// Run serves Claude Code on o.Stdin and o.Stdout until it hangs up or ctx
// ends. A token the server refuses ends it with the server's reason; a
// server that cannot be reached is tried again with backoff, saying so on
// o.Stderr, and Claude Code is served meanwhile.
func Run(ctx context.Context, o Options) error {
	c, err := newChannel(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The first connection comes before the stdio server: a bad token
	// ends the channel at once, before Claude Code waits on it.
	if err := c.connect(ctx, false); err != nil {
		if c.env.Refused() != "" || errors.Is(err, errSetup) {
			return err
		}
		fmt.Fprintf(c.log, "palaver channel: %v; trying again in the background\n", err)
	}
	if c.srv == nil {
		c.srv = c.newServer("")
	}
	loopDone := make(chan error, 1)
	go func() { loopDone <- c.loop(ctx) }()
	session, err := c.srv.Connect(ctx, c.io, nil)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- session.Wait() }()
	select {
	case <-served: // Claude Code hung up
		cancel(nil)
		err := <-loopDone
		if c.fatalErr() != nil {
			return c.fatalErr()
		}
		return ignoreCanceled(err)
	case err := <-loopDone: // the token was refused, or ctx ended
		session.Close()
		if ctx.Err() != nil && c.fatalErr() == nil {
			return nil
		}
		return err
	}
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// errSetup marks a mistake in how the channel was started.
var errSetup = errors.New("setup")

func newChannel(o Options) (*Channel, error) {
	get := o.Getenv
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("%w: reading --token-file: %v", errSetup, err)
		}
		token := strings.TrimSpace(string(b))
		get = func(k string) string {
			if k == "PALAVER_TOKEN" {
				return token
			}
			return o.Getenv(k)
		}
	}
	env, err := mcpclient.ReadEnv(get)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errSetup, err)
	}
	if strings.HasPrefix(env.Token, "plu_") {
		return nil, fmt.Errorf("%w: palaver channel acts as one agent: PALAVER_TOKEN holds a person's API token (plu_…); mint an agent token with `palaver token mint --user OWNER --agent SLUG`", errSetup)
	}
	base, profile := splitProfile(env.URL)
	switch {
	case o.Profile == "":
	case o.Profile != "inbox" && o.Profile != "rooms":
		return nil, fmt.Errorf("%w: --profile %q: give inbox or rooms, or leave it out for the default profile", errSetup, o.Profile)
	case profile != "" && profile != o.Profile:
		return nil, fmt.Errorf("%w: PALAVER_URL names the %s profile and --profile %s: give the server's default endpoint (…/mcp/) with --profile", errSetup, profile, o.Profile)
	default:
		profile = o.Profile
	}
	instance := mcpclient.Instance(get)
	if instance == "" {
		instance = defaultInstance()
	}
	if instance, err = sessionName(instance); err != nil {
		return nil, fmt.Errorf("%w: %v", errSetup, err)
	}
	c := &Channel{o: o, log: o.Stderr, ready: make(chan struct{}), opened: make(chan struct{}), maxWait: 25, statePth: o.StateFile}
	c.env = mcpclient.NewEnv(base+"/", env.Token, instance)
	c.tools = c.env
	if profile != "" {
		c.tools = mcpclient.NewEnv(base+"/"+profile+"/", env.Token, instance)
	}
	c.client = mcp.NewClient(&mcp.Implementation{Name: "palaver-channel", Version: o.Version}, nil)
	c.io = newStdio(o.Stdin, o.Stdout, c.permissionRequest)
	return c, nil
}

// splitProfile cuts a profile's endpoint (…/mcp/inbox/) into the default
// endpoint's (…/mcp, without its slash) and the profile ("" for the
// default).
func splitProfile(url string) (string, string) {
	u := strings.TrimSuffix(url, "/")
	for _, p := range []string{"inbox", "rooms"} {
		if base, ok := strings.CutSuffix(u, "/"+p); ok {
			return base, p
		}
	}
	return u, ""
}

var (
	notName   = regexp.MustCompile(`[^a-z0-9_-]+`)
	nameShape = regexp.MustCompile(`^[a-z0-9_-]{2,40}$`)
)

// defaultInstance is the session's name when PALAVER_INSTANCE gives none:
// the host's name and the working folder's, as a person tells their
// sessions apart.
func defaultInstance() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	dir, _ := os.Getwd()
	name := strings.Trim(notName.ReplaceAllString(strings.ToLower(host+"-"+filepath.Base(dir)), "-"), "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	if len(name) < 2 {
		name = "channel"
	}
	return name
}

// sessionName is the session's name as the server stores it: trimmed,
// lower-cased, spaces as dashes, 2-40 of a-z 0-9 _ -.
func sessionName(s string) (string, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "-")
	if !nameShape.MatchString(n) {
		return "", fmt.Errorf("PALAVER_INSTANCE %q: a session's name is 2-40 of a-z, 0-9, _ and -, like \"laptop-palaver\"", s)
	}
	return n, nil
}

func (c *Channel) fatalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

// sessions is the current connection to the server: the default
// profile's session and the forwarded profile's (nil while there is none).
func (c *Channel) sessions() (*mcp.ClientSession, *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.events, c.forward
}

// connect opens the sessions (with backoff when retry), registers the
// session's name, reads where the stream resumes, and serves the
// forwarded profile's tools.
func (c *Channel) connect(ctx context.Context, retry bool) error {
	old, oldForward := c.sessions()
	if old != nil {
		old.Close()
	}
	if oldForward != nil && oldForward != old {
		oldForward.Close()
	}
	var events, forward *mcp.ClientSession
	var err error
	if retry {
		events, err = mcpclient.Reconnect(ctx, c.env, c.client, c.log, "palaver channel", errors.New("it did not answer"), "to go on after cursor "+c.cursorNow())
	} else {
		events, err = c.env.Connect(ctx, c.client)
	}
	if err != nil {
		return err
	}
	if c.srv == nil {
		// The channel's instructions, then the server's (§10.4).
		instructions := ""
		if r := events.InitializeResult(); r != nil {
			instructions = r.Instructions
		}
		c.srv = c.newServer(instructions)
	}
	forward = events
	if c.tools.URL != c.env.URL {
		if forward, err = c.tools.Connect(ctx, c.client); err != nil {
			events.Close()
			return err
		}
	}
	if err := c.start(ctx, events, forward); err != nil {
		events.Close()
		if forward != events {
			forward.Close()
		}
		return err
	}
	c.mu.Lock()
	c.events, c.forward = events, forward
	c.mu.Unlock()
	c.readyOne.Do(func() { close(c.ready) })
	return nil
}

func (c *Channel) cursorNow() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cursor
}

// start registers the session's name, finds where the stream resumes
// (the state file's cursor, or the latest on a first run) and lists the
// tools to forward.
func (c *Channel) start(ctx context.Context, events, forward *mcp.ClientSession) error {
	r, err := mcpclient.CallTool(ctx, events, c.env, "whoami", map[string]any{})
	if err != nil {
		return err
	}
	var me struct {
		Agent struct {
			Handle string `json:"handle"`
		} `json:"agent"`
		LatestCursor string `json:"latest_cursor"`
	}
	if r.IsError || json.Unmarshal(mcpclient.ResultJSON(r), &me) != nil || me.Agent.Handle == "" {
		return fmt.Errorf("whoami answered %s", mcpclient.ResultJSON(r))
	}
	c.mu.Lock()
	first := c.agent == ""
	c.agent = me.Agent.Handle
	c.mu.Unlock()
	if first {
		if c.statePth == "" {
			dir, err := stateDir(c.o.Getenv)
			if err != nil {
				return fmt.Errorf("%w: %v", errSetup, err)
			}
			c.statePth = statePath(dir, c.env.URL, me.Agent.Handle, c.env.Instance)
		}
		s, err := loadState(c.statePth, c.env.URL, me.Agent.Handle, c.env.Instance)
		if err != nil {
			return fmt.Errorf("%w: %v", errSetup, err)
		}
		cursor := me.LatestCursor
		if s != nil {
			cursor = s.Cursor
			fmt.Fprintf(c.log, "palaver channel: %s's session %s goes on after the cursor in %s\n", me.Agent.Handle, c.env.Instance, c.statePth)
		} else {
			fmt.Fprintf(c.log, "palaver channel: %s's session %s starts at the latest event; its cursor is kept in %s\n", me.Agent.Handle, c.env.Instance, c.statePth)
		}
		c.mu.Lock()
		c.cursor = cursor
		c.mu.Unlock()
	}
	return c.serveTools(ctx, events, forward)
}

// save records that the stream goes on after cursor.
func (c *Channel) save(cursor string) error {
	c.mu.Lock()
	c.cursor = cursor
	s := &state{Server: c.env.URL, Agent: c.agent, Instance: c.env.Instance, Cursor: cursor}
	c.mu.Unlock()
	return s.save(c.statePth)
}

// backoff waits d or until ctx ends.
func backoff(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
