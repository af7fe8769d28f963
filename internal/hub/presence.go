package hub

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// Presence (§19): for every agent and each of its named sessions, what the
// server sees of it — never what it says of itself. A principal listens
// while one of its waits is parked (a channel's wait is its connection);
// otherwise it is active, idle or offline by when it last called.
//
// Replicas share who listens through the database without a write per
// second per waiter: a session's row is written when its first wait parks,
// renewed at most once a minute while one stays parked, and written once
// more when its last wait ended and no new one parked within listenGrace
// (a channel waits again at once after each event, so its waits coming
// and going write nothing). A replica that dies leaves rows that stop
// counting when their lease runs out.

// Presence states (§19), from the most present.
const (
	PresenceListening = "listening" // a wait parked now
	PresenceActive    = "active"    // a call within ActiveWithin
	PresenceIdle      = "idle"      // a call within IdleWithin
	PresenceOffline   = "offline"   // nothing for IdleWithin
)

// How recent a call keeps a principal active or idle (§19). Calls are
// recorded at most once a minute (touchEvery), so a state may change up
// to a minute after the last call's time would say.
const (
	ActiveWithin = 2 * time.Minute
	IdleWithin   = 30 * time.Minute
)

const (
	// listenGrace: a session whose last wait ended this recently still
	// listens; the wait it starts next finds its row as it was.
	listenGrace = 5 * time.Second
	// listenLease is how long a row written while a wait is parked says
	// the session listens, unless it is renewed (every listenRenew) or
	// ended first: a replica gone stops counting after it.
	listenLease = 90 * time.Second
	listenRenew = time.Minute
	// listenForget: rows whose listening ended this long ago are deleted,
	// by the sweep, at most once an hour.
	listenForget = 24 * time.Hour
	forgetEvery  = time.Hour
	// listenCached: on a shared store, how long a send trusts what it
	// read of another replica's listeners (the send path reads the
	// database for a recipient at most this often).
	listenCached = time.Second
)

// Listener is one replica's row of a session's listening (§19):
// Instance "" for waits that name no session, a person's included. While
// a wait is parked Until is ahead (a lease the replica renews); once the
// last wait ended it is when it ended.
type Listener struct {
	PrincipalID string
	Instance    string
	Replica     string
	Since       time.Time
	Until       time.Time
}

// Sighting is when an agent's session (Instance) was last seen; for
// Instance "", the last use of any of the agent's tokens.
type Sighting struct {
	AgentID  string
	Instance string
	LastSeen time.Time
}

// PresenceReads is what presence reads of the store.
type PresenceReads interface {
	// Listeners lists every replica's rows of the principals' listening
	// that ends after since (ended rows included, for when each last
	// listened).
	Listeners(ctx context.Context, principalIDs []string, since time.Time) ([]Listener, error)
	// Sightings lists, for each agent, every named session with its
	// last-seen time, and one row with Instance "" for the last use of
	// any of its tokens (when one was ever used).
	Sightings(ctx context.Context, agentIDs []string) ([]Sighting, error)
}

// PresenceWrites is what presence writes.
type PresenceWrites interface {
	// PutListener stores a replica's row of a session's listening,
	// replacing the one before.
	PutListener(ctx context.Context, l *Listener) error
	// DeleteListeners deletes the rows whose listening ended before t.
	DeleteListeners(ctx context.Context, before time.Time) error
}

// SessionPresence is one named session's presence.
type SessionPresence struct {
	Name     string
	State    string
	LastSeen time.Time
}

// AgentPresence is an agent's presence (listening when any of its waits
// is parked, a session's or not) and its named sessions', most present
// first, then by name; LastSeen is its latest call.
type AgentPresence struct {
	State    string
	LastSeen time.Time
	Sessions []SessionPresence
}

// Session is the named session's presence (offline when it is unknown).
func (p AgentPresence) Session(name string) SessionPresence {
	for _, s := range p.Sessions {
		if s.Name == name {
			return s
		}
	}
	return SessionPresence{Name: name, State: PresenceOffline}
}

// listeners is this hub's own waits as presence sees them, and what its
// sends last read of the other replicas'.
type listeners struct {
	mu      sync.Mutex
	replica string                           // this hub's id in the rows it writes
	by      map[string]map[string]*listening // principal id → instance → its listening
	others  map[string]othersRead            // principal id → on a shared store
	forgot  time.Time                        // the sweep last deleted old rows
}

// listening is a session's listening on this replica.
type listening struct {
	principalID, instance string
	waits                 int       // parked now
	since                 time.Time // listening since
	left                  time.Time // the last wait ended (zero while one is parked)
	written               time.Time // its row was last written with a lease (zero: never)
}

// othersRead is whether a principal listened on another replica, as read.
type othersRead struct {
	listening bool
	at        time.Time
}

func newListeners(now time.Time) listeners {
	return listeners{replica: NewID("rep", now), by: map[string]map[string]*listening{}, others: map[string]othersRead{}}
}

// listenKey names a session in what listenersOf returns.
func listenKey(principalID, instance string) string { return principalID + "\x00" + instance }

// listens reports whether the session listens on this replica as of now,
// and when it last did (zero: not that this replica knows).
func (l *listening) listens(now time.Time) (bool, time.Time) {
	if l.waits > 0 {
		return true, now
	}
	return now.Sub(l.left) < listenGrace, l.left
}

// row is the session's row as of now, listening until until.
func (l *listening) row(replica string, until time.Time) *Listener {
	return &Listener{PrincipalID: l.principalID, Instance: l.instance, Replica: replica, Since: l.since, Until: until}
}

// listen records a wait of the principal's session parking (a wait that
// may block: timeout above 0) and returns what the wait calls when it
// ends. The session's row is written here only when its listening begins
// or its lease is due for renewal.
func (h *Hub) listen(ctx context.Context, principalID, instance string) func() {
	l := &h.listeners
	now := h.now()
	l.mu.Lock()
	sessions := l.by[principalID]
	if sessions == nil {
		sessions = map[string]*listening{}
		l.by[principalID] = sessions
	}
	e := sessions[instance]
	if e == nil || (e.waits == 0 && now.Sub(e.left) >= listenGrace) {
		e = &listening{principalID: principalID, instance: instance, since: now}
		sessions[instance] = e
	}
	e.waits++
	e.left = time.Time{}
	var row *Listener
	if e.written.IsZero() || now.Sub(e.written) >= listenRenew {
		e.written = now
		row = e.row(l.replica, now.Add(listenLease))
	}
	l.mu.Unlock()
	if row != nil {
		h.putListeners(context.WithoutCancel(ctx), []*Listener{row}, false)
	}
	return func() {
		now := h.now()
		l.mu.Lock()
		if e.waits--; e.waits == 0 {
			e.left = now
		}
		l.mu.Unlock()
	}
}

// putListeners writes rows (and, with forget, deletes the long-ended
// ones); a failure is logged, not returned: presence is told, not kept.
func (h *Hub) putListeners(ctx context.Context, rows []*Listener, forget bool) {
	err := h.store.Update(ctx, func(tx Tx) error {
		for _, r := range rows {
			if err := tx.PutListener(ctx, r); err != nil {
				return err
			}
		}
		if forget {
			return tx.DeleteListeners(ctx, h.now().Add(-listenForget))
		}
		return nil
	})
	if err != nil {
		h.log.Warn("recording who listens", "rows", len(rows), "err", err)
	}
}

// SweepPresence writes what changed in this replica's listening since the
// last sweep: a lease due for renewal, a listening that ended more than
// listenGrace ago (and is forgotten here then); and at most once an hour
// deletes rows that ended long ago. The server runs it every second
// (RecheckEvery); with nothing due it writes nothing.
func (h *Hub) SweepPresence(ctx context.Context) {
	l := &h.listeners
	now := h.now()
	var rows []*Listener
	l.mu.Lock()
	for principal, sessions := range l.by {
		for instance, e := range sessions {
			switch {
			case e.waits > 0 && now.Sub(e.written) >= listenRenew:
				e.written = now
				rows = append(rows, e.row(l.replica, now.Add(listenLease)))
			case e.waits == 0 && now.Sub(e.left) >= listenGrace:
				if !e.written.IsZero() {
					rows = append(rows, e.row(l.replica, e.left))
				}
				delete(sessions, instance)
			}
		}
		if len(sessions) == 0 {
			delete(l.by, principal)
		}
	}
	forget := now.Sub(l.forgot) >= forgetEvery
	if forget {
		l.forgot = now
	}
	for id, o := range l.others {
		if now.Sub(o.at) >= listenCached {
			delete(l.others, id)
		}
	}
	l.mu.Unlock()
	if len(rows) > 0 || forget {
		h.putListeners(ctx, rows, forget)
	}
}

// heard is what presence knows of one session: whether it listens now,
// and when it last did (zero: never that anyone saw).
type heard struct {
	listening bool
	last      time.Time
}

// listenersOf reads who of the principals listens, and when each session
// last did, by listenKey: this replica's waits as it knows them, the
// other replicas' from their rows. A row of this replica whose session it
// still knows is left for what it knows.
func (h *Hub) listenersOf(ctx context.Context, r Reader, principalIDs []string) (map[string]heard, error) {
	now := h.now()
	rows, err := r.Listeners(ctx, principalIDs, now.Add(-listenForget))
	if err != nil {
		return nil, AsError(err)
	}
	out := map[string]heard{}
	note := func(key string, listening bool, last time.Time) {
		got := out[key]
		got.listening = got.listening || listening
		if last.After(got.last) {
			got.last = last
		}
		out[key] = got
	}
	l := &h.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, row := range rows {
		if _, mine := l.by[row.PrincipalID][row.Instance]; mine && row.Replica == l.replica {
			continue
		}
		last := row.Until
		if last.After(now) {
			last = now
		}
		note(listenKey(row.PrincipalID, row.Instance), row.Until.After(now), last)
	}
	for _, id := range principalIDs {
		for instance, e := range l.by[id] {
			listening, last := e.listens(now)
			note(listenKey(id, instance), listening, last)
		}
	}
	return out, nil
}

// listeningNow counts the principals of ids that listen now (any session),
// for a send's result (§19). On the store this hub alone serves it reads
// only memory; on a shared one, what it read of the other replicas'
// rows within listenCached stands, and the rest is read in one query.
func (h *Hub) listeningNow(ctx context.Context, ids []string) int {
	if len(ids) == 0 {
		return 0
	}
	now := h.now()
	l := &h.listeners
	n := 0
	var ask []string
	l.mu.Lock()
	for _, id := range ids {
		if h.listensHere(id, now) {
			n++
			continue
		}
		if h.alone {
			continue
		}
		if o, ok := l.others[id]; ok && now.Sub(o.at) < listenCached {
			if o.listening {
				n++
			}
			continue
		}
		ask = append(ask, id)
	}
	l.mu.Unlock()
	if len(ask) == 0 {
		return n
	}
	rows, err := h.store.Listeners(ctx, ask, now)
	if err != nil {
		h.log.Warn("reading who listens", "err", err)
		return n
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ask {
		o := othersRead{at: now, listening: slices.ContainsFunc(rows, func(r Listener) bool {
			return r.PrincipalID == id && r.Replica != l.replica && r.Until.After(now)
		})}
		l.others[id] = o
		if o.listening {
			n++
		}
	}
	return n
}

// listensHere reports whether any session of the principal listens on
// this replica; h.listeners.mu is held.
func (h *Hub) listensHere(principalID string, now time.Time) bool {
	for _, e := range h.listeners.by[principalID] {
		if yes, _ := e.listens(now); yes {
			return true
		}
	}
	return false
}

// stateAt is the presence a principal last seen at seen has at now, when
// it does not listen.
func stateAt(seen, now time.Time) string {
	switch {
	case seen.IsZero():
		return PresenceOffline
	case now.Sub(seen) < ActiveWithin:
		return PresenceActive
	case now.Sub(seen) < IdleWithin:
		return PresenceIdle
	}
	return PresenceOffline
}

// presenceRank orders states from the most present.
func presenceRank(state string) int {
	return slices.Index([]string{PresenceListening, PresenceActive, PresenceIdle, PresenceOffline}, state)
}

// Presences is the presence of each agent (§19), by agent id.
func (h *Hub) Presences(ctx context.Context, agents []*Agent) (map[string]AgentPresence, error) {
	out := map[string]AgentPresence{}
	if len(agents) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(agents))
	for _, a := range agents {
		if !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	sightings, err := h.store.Sightings(ctx, ids)
	if err != nil {
		return nil, AsError(err)
	}
	heardOf, err := h.listenersOf(ctx, h.store, ids)
	if err != nil {
		return nil, err
	}
	now := h.now()
	for _, id := range ids {
		p := AgentPresence{}
		listening := false
		for key, hd := range heardOf {
			if principal, _, _ := strings.Cut(key, "\x00"); principal == id && hd.listening {
				listening = true
			}
		}
		for _, s := range sightings {
			if s.AgentID != id {
				continue
			}
			if s.LastSeen.After(p.LastSeen) {
				p.LastSeen = s.LastSeen
			}
			if s.Instance == "" {
				continue
			}
			sp := SessionPresence{Name: s.Instance, LastSeen: s.LastSeen, State: stateAt(s.LastSeen, now)}
			if heardOf[listenKey(id, s.Instance)].listening {
				sp.State = PresenceListening
			}
			p.Sessions = append(p.Sessions, sp)
		}
		p.State = stateAt(p.LastSeen, now)
		if listening {
			p.State = PresenceListening
		}
		slices.SortStableFunc(p.Sessions, func(a, b SessionPresence) int {
			if d := presenceRank(a.State) - presenceRank(b.State); d != 0 {
				return d
			}
			if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
				return c
			}
			return cmp.Compare(a.Name, b.Name)
		})
		out[id] = p
	}
	return out, nil
}

// lastListened is when the session last had a wait parked, any
// replica's, as of now (now itself when one is): zero when none did that
// presence still knows of.
func (h *Hub) lastListened(ctx context.Context, r Reader, principalID, instance string) (time.Time, error) {
	heardOf, err := h.listenersOf(ctx, r, []string{principalID})
	if err != nil {
		return time.Time{}, err
	}
	hd := heardOf[listenKey(principalID, instance)]
	if hd.listening {
		return h.now(), nil
	}
	return hd.last, nil
}

// recipientIDs are the ids of those a sent message is for, as recipients
// counts them.
func recipientIDs(v *ConversationView, m *Message) []string {
	var out []string
	for i := range v.Participants {
		p := &v.Participants[i]
		if p.PrincipalID != m.SenderID && reaches(v, m, p) && (!v.Conversation.ByMention || slices.Contains(m.Mentions, p.Handle)) {
			out = append(out, p.PrincipalID)
		}
	}
	return out
}
