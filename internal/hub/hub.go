// Package hub holds every rule of Palaver (DESIGN.md): who may talk to whom,
// conversations and messages, delivery, events and waiting. It is
// transport-free: every face — the MCP profiles, REST, the dashboard, A2A,
// OAuth, the command line — calls it, and it reaches storage only through
// the Store interface it declares. What the core barely calls lives in
// leaves beside the faces (internal/oauth, webhook, a2aclient, push,
// export, a2a/tasks, overview, projects, reach, rooms, permissions, input,
// search and fulltext, picture, throttle, outbox, egress), which leaves.go
// serves.
package hub

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/outbox"
)

// Clock tells the time; tests inject a fake one so expiries are testable
// without sleeping.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// Waker wakes parked waiters after a commit (§6, §13). Subscribe must be
// called before the query whose emptiness the waiter will park on: a Publish
// for the recipient after Subscribe returns is never lost.
type Waker interface {
	// Subscribe returns a channel that receives (without blocking the
	// publisher) after each Publish naming recipientID — or, for
	// AnyRecipient, after every Publish — and a cancel func that must be
	// called when the waiter leaves.
	Subscribe(recipientID string) (<-chan struct{}, func())
	// Publish wakes the recipients' waiters; called after the commit that
	// made their events visible.
	Publish(recipientIDs []string)
}

// AnyRecipient subscribes to every commit's publication, whoever its
// recipients: a wait whose events are held back (Pos) asks again when
// another transaction ends.
const AnyRecipient = ""

// Hub is the domain service. It is safe for concurrent use.
type Hub struct {
	store    Store
	waker    Waker
	clock    Clock
	log      *slog.Logger
	settings Settings

	// What cursors are checked against (events.go): the database's epoch
	// as the key of their tags, the current generation, and the ones
	// before it (a restore ends one).
	cursorKey   []byte
	generation  string
	generations []Generation

	mu           sync.Mutex
	waits        map[string][]context.Context // each principal's waits, until they return
	named        map[string]namedWait         // live wait per agent id + "\x00" + instance
	touched      map[string]time.Time         // token id → last recorded use
	resolved     resolved                     // tokens as last resolved, while nothing changed them (authcache.go)
	seen         map[string]time.Time         // agent id/instance → last recorded sighting
	stop         chan struct{}                // closed by Shutdown: waits return timed_out
	egressPolicy egress.Policy                // which addresses outbound calls may reach
	requests     requestLimiter               // requests per token (§15)
	resolver     Resolver                     // looks up the hosts of outbound URLs when they are saved
	hookKick     outbox.Kick                  // rung when webhook calls were queued (§18)
	hooked       agentSet                     // which agents have endpoints, as last read
	permissions  PermissionDesk               // the permission requests Approvals lists (internal/permissions)
	remoteKick   outbox.Kick                  // rung when calls to remote agents were queued
	remotes      agentSet                     // which agents are remote, as last read
	notifyKick   outbox.Kick                  // rung when owner notifications were queued (§19)
	rechecked    Pos                          // the newest position Recheck has looked at

	observer Observer // told sends, brakes, parked waits and wake-ups (§14)
	commits  *commits // when each recipient's events were last published, for Woke

	listeners listeners // who listens here, for presence (§19)
	alone     bool      // Options.Alone: no other replica serves this store
}

// Options configure New.
type Options struct {
	Store    Store
	Waker    Waker
	Clock    Clock        // default SystemClock
	Logger   *slog.Logger // default slog.Default()
	Settings Settings     // zero value: DefaultSettings()
	// PrivateHosts are hosts whose client documents may be fetched, and
	// webhooks called, even at a private, loopback or otherwise special
	// address: the admin's exception to the egress policy.
	PrivateHosts []string
	// Resolver looks up the host of an outbound URL (a webhook endpoint,
	// a push service) when it is saved (default net.DefaultResolver).
	Resolver Resolver
	// Observer is told sends by outcome, brakes tripped, parked waits and
	// wake-up times, for /metrics (§14); nil: nobody is.
	Observer Observer
	// Alone says this hub is the only server of its store (SQLite): each
	// start then begins a new generation of cursors (§6), so a database
	// file copied back while the server was stopped never lets a cursor
	// it issued before skip the events the copy lacks. Replicas sharing
	// PostgreSQL leave it false.
	Alone bool
}

// New returns a Hub over an opened, migrated store.
func New(ctx context.Context, o Options) (*Hub, error) {
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Observer == nil {
		o.Observer = nobody{}
	}
	if o.Settings == (Settings{}) {
		o.Settings = DefaultSettings()
	}
	if err := o.Settings.Validate(); err != nil {
		return nil, err
	}
	epoch, err := o.Store.Meta(ctx, MetaEpoch)
	if err != nil {
		return nil, AsError(err)
	}
	if o.Alone {
		if _, err := MarkRestored(ctx, o.Store); err != nil {
			return nil, err
		}
	}
	gen, gens, err := loadGenerations(ctx, o.Store)
	if err != nil {
		return nil, AsError(err)
	}
	latest, _, err := o.Store.LatestEvent(ctx)
	if err != nil {
		return nil, AsError(err)
	}
	h := &Hub{
		store:        o.Store,
		waker:        o.Waker,
		clock:        o.Clock,
		log:          o.Logger,
		settings:     o.Settings,
		cursorKey:    []byte(epoch),
		generation:   gen,
		generations:  gens,
		waits:        map[string][]context.Context{},
		named:        map[string]namedWait{},
		touched:      map[string]time.Time{},
		seen:         map[string]time.Time{},
		stop:         make(chan struct{}),
		rechecked:    latest,
		egressPolicy: egress.NewPolicy(o.PrivateHosts),
		hookKick:     outbox.NewKick(),
		remoteKick:   outbox.NewKick(),
		notifyKick:   outbox.NewKick(),
		resolver:     o.Resolver,
		observer:     o.Observer,
		commits:      newCommits(),
		listeners:    newListeners(o.Clock.Now()),
		alone:        o.Alone,
	}
	return h, nil
}

// Meta keys the hub reads. The store creates MetaEpoch with the database.
const (
	MetaEpoch         = "epoch"
	MetaPrunedThrough = "events_pruned_through"
)

// Shutdown ends every parked wait with timed_out (§14 graceful shutdown).
// It is safe to call more than once.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
}

func (h *Hub) now() time.Time { return h.clock.Now().UTC().Truncate(time.Millisecond) }

// AllowFetch reports whether host may be called at the address ip — a
// webhook called (§18), a client document fetched (§10.6): the egress
// policy (internal/egress: globally reachable addresses, the IPv4 address
// an IPv6 one carries judged too), with any address of a host the admin
// let through (Options.PrivateHosts, `palaver serve --allow-private-host`).
func (h *Hub) AllowFetch(host string, ip netip.Addr) bool { return h.egressPolicy.Allow(host, ip) }

// Egress is the policy of outbound calls (internal/egress), with the
// hosts the admin let through: internal/oauth fetches client documents by it.
func (h *Hub) Egress() egress.Policy { return h.egressPolicy }

// Now is the hub's clock: what the leaves carved out of it (internal/oauth)
// tell the time by.
func (h *Hub) Now() time.Time { return h.now() }

// MetaReads are the queries of the meta table (Reader embeds them).
type MetaReads interface {
	Meta(ctx context.Context, key string) (string, error)
}

// MetaWrites are the writes of the meta table (Tx embeds them).
type MetaWrites interface {
	Reader
	SetMeta(ctx context.Context, key, value string) error
}

// MetaPublicURL is the URL the last server to start said people reach it
// at, so the command line's links (palaver user invite) name the server's
// real address rather than the default one.
const MetaPublicURL = "public_url"

// RecordPublicURL is a starting server saying where people reach it.
func (h *Hub) RecordPublicURL(ctx context.Context, url string) error {
	return h.update(ctx, func(tx Tx) ([]*Event, error) { return nil, tx.SetMeta(ctx, MetaPublicURL, url) })
}

// PublicURL is the URL the last server to start recorded ("" when none
// has).
func (h *Hub) PublicURL(ctx context.Context) (string, error) {
	url, err := h.store.Meta(ctx, MetaPublicURL)
	if err != nil {
		return "", AsError(err)
	}
	return url, nil
}
