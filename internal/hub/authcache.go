package hub

import (
	"context"
	"sync"
)

// Authentication from memory (§17): what a token resolves to — the token,
// its agent, its user — is kept after the first call, and trusted while
// the store's AuthGeneration stands. The store moves that number in the
// transaction of every change to tokens, agents and users, from whichever
// process or replica makes it, so a token revoked, expired early or
// deleted, an agent archived or set to listen, is seen on the very next
// call; reading the number is one look-up of one row instead of the
// token's joined read.

// maxResolved bounds what is kept: past it, everything is read again.
const maxResolved = 10000

// resolved is what this hub keeps.
type resolved struct {
	mu      sync.Mutex
	gen     int64 // the AuthGeneration the entries stand on
	entries map[string]resolvedToken
}

// resolvedToken is one token as TokenByHash read it.
type resolvedToken struct {
	t *Token
	a *Agent // nil for a person's token
	u *User
}

// resolve is the store's TokenByHash, from memory while nothing it reads
// changed. The number is read before the token, so that a change
// committed between the two is seen at the next call at worst. It returns
// copies: a caller may change what it is given.
//
// It reads off the caller's goroutine (OffStack): every request is
// authenticated, a wait's among them, which would then park on a stack
// grown in the reads.
func (h *Hub) resolve(ctx context.Context, hash []byte) (t *Token, a *Agent, u *User, err error) {
	OffStack(func() { t, a, u, err = h.resolveHere(ctx, hash) })
	return t, a, u, err
}

func (h *Hub) resolveHere(ctx context.Context, hash []byte) (*Token, *Agent, *User, error) {
	gen, err := h.store.AuthGeneration(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	k := string(hash)
	c := &h.resolved
	c.mu.Lock()
	if c.gen != gen || c.entries == nil {
		c.gen, c.entries = gen, map[string]resolvedToken{}
	}
	e, ok := c.entries[k]
	c.mu.Unlock()
	if !ok {
		t, a, u, err := h.store.TokenByHash(ctx, hash)
		if err != nil {
			return nil, nil, nil, err
		}
		e = resolvedToken{t, a, u}
		c.mu.Lock()
		if c.gen == gen {
			if len(c.entries) >= maxResolved {
				c.entries = map[string]resolvedToken{}
			}
			c.entries[k] = e
		}
		c.mu.Unlock()
	}
	return e.copies()
}

func (e resolvedToken) copies() (*Token, *Agent, *User, error) {
	t, u := *e.t, *e.u
	var a *Agent
	if e.a != nil {
		ac := *e.a
		a = &ac
	}
	return &t, a, &u, nil
}
