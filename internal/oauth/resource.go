package oauth

import (
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/palaverhq/palaver/internal/hub"
)

// ResourceMetadataPath is where RFC 9728 puts a protected resource's
// metadata: this path, followed by the resource's own path.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the RFC 9728 metadata of a resource of this server
// (an MCP endpoint, the A2A endpoints): its identifier, this server's
// issuer as its one authorization server, the scopes, and bearer tokens
// in the Authorization header only (§10.6).
func ResourceMetadata(resource, issuer string) *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{issuer},
		ScopesSupported:        hub.AllScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Palaver",
	}
}
