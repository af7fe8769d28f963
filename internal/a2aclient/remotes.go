package a2aclient

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/outbox"
)

// Remote A2A agents as their owners manage them (§18, "Out"): an owner
// adds one by its Agent Card's URL and it becomes an agent of theirs; its
// card is read again daily; a message to it goes out from the outbox
// (outbox.go), and its answer comes back into the conversation.

// The remote agents' numbers (§18).
const (
	MaxCredential = 4096
	MaxURL        = 2048
)

// Store is what Remotes reads and writes.
type Store interface {
	hub.RemoteReads
	AgentByID(ctx context.Context, id string) (*hub.Agent, error)
	UserByID(ctx context.Context, id string) (*hub.User, error)
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
}

// Remotes are the remote A2A agents of the hub's people: the faces decode,
// call one of its methods, and render; palaver serve runs its outbox
// (Run) and reads the cards again (RefreshCards).
type Remotes struct {
	hub    *hub.Hub // its clock, its egress policy, its commits and sends
	store  Store
	client *Client // nil: none can be added, and the calls queued are made elsewhere
	log    *slog.Logger
	outbox *outbox.Dispatcher[*hub.RemoteCall, Attempt]
}

// RemotesOptions configure NewRemotes.
type RemotesOptions struct {
	Hub   *hub.Hub
	Store Store // the hub's store
	// Client calls the remote agents; nil: none can be added, and the
	// calls the hub queues are made by Remotes that have one.
	Client *Client
	Logger *slog.Logger
}

// NewRemotes returns the remote agents of the hub's people.
func NewRemotes(o RemotesOptions) *Remotes {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	r := &Remotes{hub: o.Hub, store: o.Store, client: o.Client, log: o.Logger}
	r.outbox = r.newOutbox()
	return r
}

// RemoteAgentInput is what an owner adds a remote agent with.
type RemoteAgentInput struct {
	Slug    string // its name among the owner's agents
	CardURL string
	// Credential is presented on every call, as an Authorization header
	// ("Bearer …" when it names no scheme); "" for none.
	Credential string
}

// Add adds a remote A2A agent for the person (§18): its card is fetched
// (through the egress guard) and checked first, and nothing is made when
// it cannot be. It becomes the agent u/slug.
func (m *Remotes) Add(ctx context.Context, u *hub.User, in RemoteAgentInput) (*hub.RemoteAgent, error) {
	slug := strings.TrimSpace(in.Slug)
	if !hub.ValidSlug(slug) {
		return nil, hub.Invalid("", "a remote agent's name is 1–40 of a-z, 0-9 and - (like weather), its {handle} then %s/NAME; got %q", u.Handle, hub.Echo(in.Slug))
	}
	cardURL := strings.TrimSpace(in.CardURL)
	if p, err := url.Parse(cardURL); err != nil || p.Scheme != "https" || p.Host == "" || p.User != nil || len(cardURL) > MaxURL {
		return nil, hub.Invalid("", "the card URL must be an https URL of at most %d characters, like https://agent.example/.well-known/agent-card.json; got %q", MaxURL, hub.Echo(in.CardURL))
	}
	cred := strings.TrimSpace(in.Credential)
	if len(cred) > MaxCredential || strings.ContainsAny(cred, "\r\n") {
		return nil, hub.Invalid("", "the credential must be one line of at most %d bytes", MaxCredential)
	}
	if cred != "" && !strings.Contains(cred, " ") {
		cred = "Bearer " + cred
	}
	if m.client == nil {
		return nil, &hub.Error{Kind: hub.KindInternal, Msg: "this server calls no remote agents"}
	}
	fctx, cancel := context.WithTimeout(ctx, CallTimeout)
	card, err := m.client.FetchCard(fctx, cardURL, cred, m.hub.AllowFetch)
	cancel()
	if err != nil {
		return nil, hub.Invalid("", "the agent card at %s could not be used: %s; nothing was added", hub.EscapeBraces(cardURL),
			hub.EscapeBraces(hub.Preview(hub.CleanText(err.Error()), hub.CallError)))
	}
	now := m.hub.Now()
	r := &hub.RemoteAgent{CardURL: cardURL, HasCredential: cred != "", CreatedAt: now}
	setCard(r, card, now)
	a := &hub.Agent{ID: hub.NewID(hub.IDAgent, now), OwnerID: u.ID, OwnerHandle: u.Handle, Slug: slug,
		Description: r.Description, Mode: hub.ModeActive, CreatedAt: now}
	r.AgentID, r.Handle = a.ID, a.Handle()
	err = m.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		if err := tx.InsertAgent(ctx, a); err != nil {
			return nil, err
		}
		return nil, tx.InsertRemoteAgent(ctx, r, cred)
	})
	if errors.Is(err, hub.ErrDuplicate) {
		return nil, &hub.Error{Kind: hub.KindConflict, Msg: "you already have an agent named " + a.Handle() + " (archived agents keep their {handle}); pick another name"}
	}
	if err != nil {
		return nil, err
	}
	m.hub.ForgetRemoteAgents()
	return r, nil
}

// List lists the person's remote agents.
func (m *Remotes) List(ctx context.Context, u *hub.User) ([]*hub.RemoteAgent, error) {
	rs, err := m.store.RemoteAgents(ctx, u.ID)
	if err != nil {
		return nil, hub.AsError(err)
	}
	return rs, nil
}

// Remove removes the person's remote agent u/slug: it is archived (it
// leaves every conversation, its handle stays taken), its credential
// forgotten and its messages still to go out dropped.
func (m *Remotes) Remove(ctx context.Context, u *hub.User, slug string) error {
	var found *hub.RemoteAgent
	rs, err := m.List(ctx, u)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Handle == u.Handle+"/"+strings.TrimSpace(slug) {
			found = r
		}
	}
	if found == nil {
		return hub.NotFound("you have no remote agent named %q; list your remote agents to see their names", hub.Echo(slug))
	}
	now := m.hub.Now()
	err = m.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) {
		if err := tx.RemoveRemoteAgent(ctx, found.AgentID, now); err != nil {
			return nil, err
		}
		if err := tx.SetAgentArchived(ctx, found.AgentID, now); err != nil {
			return nil, err
		}
		return nil, tx.RevokeAgentTokens(ctx, found.AgentID, now)
	})
	m.hub.ForgetRemoteAgents()
	return err
}

// setCard keeps in r what card says, cleaned and cut to size, as read at.
func setCard(r *hub.RemoteAgent, card *Card, at time.Time) {
	r.Name, r.Description = hub.Preview(hub.CleanText(card.Name), 200), hub.Preview(hub.CleanText(card.Description), hub.MaxDescription)
	r.Provider, r.Endpoint, r.Version, r.FetchedAt = hub.Preview(hub.CleanText(card.Provider), 200), card.Endpoint, card.Version, at
	r.Skills = nil
	for _, s := range card.Skills {
		r.Skills = append(r.Skills, hub.Preview(hub.CleanText(strings.ReplaceAll(s, "\n", " ")), 100))
	}
}

// CardAge is how old a remote agent's card may grow before it is read
// again (§18: refreshed daily).
const CardAge = 24 * time.Hour

// RefreshCards reads again, through the egress guard, the card of every
// remote agent read more than CardAge ago, and keeps what it now says:
// its name, description, provider, skills and the interface called. A
// card that cannot be read or used now is kept as it was and tried again
// at the next sweep. It returns how many were read again; the server
// sweeps every hour.
func (m *Remotes) RefreshCards(ctx context.Context) (int, error) {
	if m.client == nil {
		return 0, nil
	}
	stale, err := m.store.StaleRemoteCards(ctx, m.hub.Now().Add(-CardAge))
	if err != nil {
		return 0, hub.AsError(err)
	}
	refreshed := 0
	var errs []error
	for _, c := range stale {
		fctx, cancel := context.WithTimeout(ctx, CallTimeout)
		card, err := m.client.FetchCard(fctx, c.CardURL, c.Credential, m.hub.AllowFetch)
		cancel()
		if ctx.Err() != nil {
			return refreshed, ctx.Err()
		}
		if err != nil {
			m.log.Warn("a remote agent's card could not be read again; it is kept as it was", "agent", c.AgentID, "card", c.CardURL, "err", err)
			continue
		}
		r := &hub.RemoteAgent{AgentID: c.AgentID}
		setCard(r, card, m.hub.Now())
		if err := m.hub.Commit(ctx, func(tx hub.Tx) ([]*hub.Event, error) { return nil, tx.UpdateRemoteCard(ctx, r) }); err != nil {
			errs = append(errs, err)
			continue
		}
		refreshed++
	}
	return refreshed, errors.Join(errs...)
}
