package oauth

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/throttle"
)

// The OAuth 2.1 authorization server's logic (§2, §10.6), beside the
// endpoints that speak it (oauth.go) and the consent page (internal/web)
// that call it: clients register (RFC 7591) or are known by a client ID
// metadata document; a person consents to let a client act as one of
// their agents with some scopes; the client trades the authorization code
// (PKCE S256 only) for an access token of an hour and a refresh token that
// rotates on every use. Both tokens are rows of the hub's tokens table, so
// the hub's one verifier serves static and OAuth tokens alike.

// Lifetimes and limits of OAuth (§10.6).
const (
	AccessTokenLifetime  = time.Hour
	RefreshTokenLifetime = 30 * 24 * time.Hour
	// CodeLifetime is how long an authorization code may wait for its
	// exchange.
	CodeLifetime = 5 * time.Minute
	// ClientDocumentMaxBytes bounds a client ID metadata document, and
	// ClientDocumentTTL is how long a fetched one is kept before it is
	// fetched again.
	ClientDocumentMaxBytes = 16 << 10
	ClientDocumentTTL      = time.Hour
	// MaxRedirectURIs bounds a client's redirect URIs.
	MaxRedirectURIs = 10
)

// codePrefix starts an authorization code, never taken as a bearer token.
const codePrefix = "plc_"

// OAuth error codes (RFC 6749 §4.1.2.1, §5.2; RFC 7591 §3.2.2; RFC 8707),
// the Code of the hub.Errors the Authority returns.
const (
	OAuthInvalidRequest      = "invalid_request"
	OAuthInvalidClient       = "invalid_client"
	OAuthInvalidGrant        = "invalid_grant"
	OAuthUnauthorizedClient  = "unauthorized_client"
	OAuthUnsupportedGrant    = "unsupported_grant_type"
	OAuthUnsupportedResponse = "unsupported_response_type"
	OAuthInvalidScope        = "invalid_scope"
	OAuthInvalidTarget       = "invalid_target"
	OAuthAccessDenied        = "access_denied"
	OAuthInvalidRedirectURI  = "invalid_redirect_uri"
	OAuthInvalidMetadata     = "invalid_client_metadata"
)

func oauthErr(kind hub.Kind, code, format string, args ...any) *hub.Error {
	return &hub.Error{Kind: kind, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func invalid(code, format string, args ...any) *hub.Error {
	return &hub.Error{Kind: hub.KindInvalid, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// DocumentFetcher fetches a client ID metadata document: an https GET of
// url that connects to no address allow refuses, follows no redirect,
// reads at most max bytes and gives up after a short timeout. The hub
// decides what may be fetched; the fetcher only obeys.
type DocumentFetcher interface {
	Fetch(ctx context.Context, url string, allow func(netip.Addr) bool, max int64) ([]byte, error)
}

// Store is what the Authority reads and writes.
type Store interface {
	Update(ctx context.Context, fn func(tx hub.Tx) error) error
	OAuthClient(ctx context.Context, id string) (*hub.OAuthClient, error)
	OAuthGrant(ctx context.Context, id string) (*hub.OAuthGrant, error)
	OAuthGrants(ctx context.Context, agentID string) ([]*hub.OAuthGrant, error)
	OAuthCodeByHash(ctx context.Context, hash []byte) (*hub.OAuthCode, error)
	TokenByHash(ctx context.Context, hash []byte) (*hub.Token, *hub.Agent, *hub.User, error)
	AgentByID(ctx context.Context, id string) (*hub.Agent, error)
	Agents(ctx context.Context, ownerID string, includeArchived bool) ([]*hub.Agent, error)
}

// How often a client without an account may register, and have its
// metadata document fetched, from one address (§15).
var (
	registrations   = throttle.Allowance{Burst: 10, Every: time.Minute} // OAuth clients registered from one address
	documentFetches = throttle.Allowance{Burst: 10, Every: time.Minute} // client metadata documents fetched for one address
)

// An Authority is the authorization server's logic over the hub's store:
// the oauth endpoints and the consent page decode, call one of its
// methods, and render.
type Authority struct {
	hub      *hub.Hub // its clock, its egress policy, the person's agents
	store    Store
	fetcher  DocumentFetcher
	log      *slog.Logger
	throttle throttle.Throttle // registrations and document fetches by address
}

// AuthorityOptions configure NewAuthority.
type AuthorityOptions struct {
	Hub   *hub.Hub
	Store Store // the hub's store
	// Fetcher fetches client ID metadata documents; nil: clients must
	// register instead.
	Fetcher DocumentFetcher
	Logger  *slog.Logger
}

// NewAuthority returns the authorization server's logic.
func NewAuthority(o AuthorityOptions) *Authority {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Authority{hub: o.Hub, store: o.Store, fetcher: o.Fetcher, log: o.Logger}
}
