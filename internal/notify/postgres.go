package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Channel is the PostgreSQL notification channel replicas share.
const Channel = "palaver_events"

// maxPayload keeps a notification under PostgreSQL's 8000-byte limit.
const maxPayload = 7500

// Postgres wakes waiters across replicas on one PostgreSQL database (§13).
// Publish wakes this replica's waiters at once and hands the recipient ids
// to one notifier goroutine, which sends them with pg_notify after the
// commit — never inside the message transaction — coalescing what
// piles up while it sends. One listener connection per replica (never one
// per waiter) wakes local waiters for the other replicas' notifications.
// Notifications are hints: the hub's Recheck (every second, and here on
// every reconnect) is the safety net, so a lost one delays, never loses.
type Postgres struct {
	*Local
	url  string
	log  *slog.Logger
	self string // this replica's id, to skip its own notifications

	mu          sync.Mutex
	onReconnect func()
	pending     map[string]struct{}
	kick        chan struct{}

	cancel context.CancelFunc
	done   sync.WaitGroup

	listenerPID uint32 // for tests that kill the listener
}

// OpenPostgres starts the listener and the notifier for url; Close stops
// them.
func OpenPostgres(ctx context.Context, url string, log *slog.Logger) (*Postgres, error) {
	var b [6]byte
	rand.Read(b[:])
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &Postgres{Local: NewLocal(), url: url, log: log, self: hex.EncodeToString(b[:]),
		pending: map[string]struct{}{}, kick: make(chan struct{}, 1), cancel: cancel}
	// Connect once before returning, so a bad URL fails at start.
	conn, err := p.connect(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	p.done.Add(2)
	go p.listen(ctx, conn)
	go p.notify(ctx)
	return p, nil
}

// OnReconnect sets what to call each time the listener (re)connects,
// before it waits: the hub rechecks for events it may have missed meanwhile.
func (p *Postgres) OnReconnect(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onReconnect = f
}

// Close stops the listener and the notifier, sending what is pending first.
func (p *Postgres) Close() {
	p.cancel()
	p.done.Wait()
}

// Publish wakes local waiters and queues the recipients for other replicas.
func (p *Postgres) Publish(recipientIDs []string) {
	p.Local.Publish(recipientIDs)
	p.mu.Lock()
	for _, id := range recipientIDs {
		p.pending[id] = struct{}{}
	}
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *Postgres) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	p.mu.Lock()
	p.listenerPID = conn.PgConn().PID()
	p.mu.Unlock()
	return conn, nil
}

// listen waits for notifications on its own connection, reconnecting after
// a failure with a short pause.
func (p *Postgres) listen(ctx context.Context, conn *pgx.Conn) {
	defer p.done.Done()
	for {
		p.mu.Lock()
		recheck := p.onReconnect
		p.mu.Unlock()
		if recheck != nil {
			recheck()
		}
		err := p.receive(ctx, conn)
		conn.Close(context.Background())
		if ctx.Err() != nil {
			return
		}
		p.log.Warn("lost the notification listener; reconnecting", "err", err)
		for conn = nil; conn == nil; {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			if conn, err = p.connect(ctx); err != nil {
				p.log.Warn("reconnecting the notification listener", "err", err)
			}
		}
	}
}

func (p *Postgres) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		from, ids, ok := strings.Cut(n.Payload, "|")
		if !ok || from == p.self {
			continue
		}
		p.Local.Publish(strings.Split(ids, ","))
	}
}

// notify sends queued recipients with pg_notify in payloads under the
// limit, on its own connection, reconnecting as needed.
func (p *Postgres) notify(ctx context.Context) {
	defer p.done.Done()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		}
		p.mu.Lock()
		ids := make([]string, 0, len(p.pending))
		for id := range p.pending {
			ids = append(ids, id)
		}
		clear(p.pending)
		p.mu.Unlock()
		for _, payload := range payloads(p.self, ids) {
			if conn == nil {
				c, err := pgx.Connect(ctx, p.url)
				if err != nil {
					p.log.Warn("connecting the notifier; the recheck will wake the other replicas", "err", err)
					break
				}
				conn = c
			}
			if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, payload); err != nil {
				p.log.Warn("sending a notification; the recheck will wake the other replicas", "err", err)
				conn.Close(context.Background())
				conn = nil
			}
		}
	}
}

// payloads packs "self|id,id,…" notifications under maxPayload bytes.
func payloads(self string, ids []string) []string {
	var out []string
	var b strings.Builder
	for _, id := range ids {
		if b.Len() > 0 && b.Len()+1+len(id) > maxPayload {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(self + "|" + id)
		} else {
			b.WriteString("," + id)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// ListenerPID is the server process id of the listener connection (tests
// terminate it to show that a lost listener delays, never loses).
func (p *Postgres) ListenerPID() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listenerPID
}
