package a2a

import (
	"net/http"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/palaverhq/palaver/internal/a2a/tasks"
	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

// CardPath is where an agent's card is, under its endpoint: A2A's
// well-known name, so a client given the endpoint finds the card.
const CardPath = "/.well-known/agent-card.json"

// ProtocolVersion is the A2A revision the 0.3 card names.
const ProtocolVersion = "0.3.0"

// bindingJSONRPC is the protocol binding the endpoint serves.
const bindingJSONRPC = "JSONRPC"

// authServerMetadata is the OAuth authorization server's metadata path
// (RFC 8414), which internal/oauth serves.
const authServerMetadata = "/.well-known/oauth-authorization-server"

// cardWords are what both revisions' cards say of an exposed agent. The
// name is the agent's handle; the description and skills are its owner's
// words (untrusted). Callers authenticate with a bearer token — an
// agent's plv_… or a person's plu_… — or an OAuth access token from
// Palaver's authorization server.
type cardWords struct {
	name, description, version, endpoint, base, organization string
	bearerFormat, bearer, oauth                              string
	scopes                                                   map[string]string
}

func (s *Server) cardWords(r *http.Request, a *hub.Agent) cardWords {
	base := s.base(r)
	w := cardWords{
		name: a.Handle(), description: a.Description, version: build.Current().Version, endpoint: s.endpointURL(r, a),
		base: base, organization: "Palaver (" + a.OwnerHandle + ")",
		bearerFormat: "plv_… (an agent's token) or plu_… (a person's)",
		bearer:       "A Palaver token: the call is that agent's or that person's, under their reach, brakes and review.",
		oauth: "Palaver's OAuth 2.1 authorization server (PKCE S256); the person signs in and picks which agent calls. " +
			"Ask for the resource " + base + hub.A2AResourcePath + " (RFC 8707): a token issued for an MCP endpoint is refused here.",
		scopes: map[string]string{hub.ScopeRead: "read tasks and replies", hub.ScopeWrite: "send messages"},
	}
	if w.description == "" {
		w.description = "An agent of " + a.OwnerHandle + " on Palaver."
	}
	if w.version == "" {
		w.version = "dev"
	}
	return w
}

// cardOf is an exposed agent's Agent Card in A2A 0.3's shape, as 0.3
// clients have always had it.
func (s *Server) cardOf(r *http.Request, ea *tasks.ExposedAgent) *a2a.AgentCard {
	w := s.cardWords(r, ea.Agent)
	skills := make([]a2a.AgentSkill, 0, len(ea.Exposure.Skills))
	for _, sk := range ea.Exposure.Skills {
		skills = append(skills, a2a.AgentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: []string{}})
	}
	return &a2a.AgentCard{
		Name:               w.name,
		Description:        w.description,
		URL:                w.endpoint,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            w.version,
		Provider:           &a2a.AgentProvider{Org: w.organization, URL: w.base},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "text/markdown"},
		Skills:             skills,
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "bearer", BearerFormat: w.bearerFormat, Description: w.bearer},
			"oauth": a2a.OAuth2SecurityScheme{
				Description:       w.oauth,
				Oauth2MetadataURL: w.base + authServerMetadata,
				Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{
					AuthorizationURL: w.base + oauth.AuthorizePath, TokenURL: w.base + oauth.TokenPath, Scopes: w.scopes}},
			},
		},
		Security: []a2a.SecurityRequirements{{"bearer": {}}, {"oauth": {hub.ScopeRead, hub.ScopeWrite}}},
	}
}

// card10Of is an exposed agent's Agent Card in A2A 1.0's shape. Its
// interfaces are the one endpoint twice: A2A 1.0 first, the one preferred,
// then 0.3, which a request gets by sending no A2A-Version.
func (s *Server) card10Of(r *http.Request, ea *tasks.ExposedAgent) *AgentCard {
	w := s.cardWords(r, ea.Agent)
	skills := make([]AgentSkill, 0, len(ea.Exposure.Skills))
	for _, sk := range ea.Exposure.Skills {
		skills = append(skills, AgentSkill{ID: sk.ID, Name: sk.Name, Description: sk.Description, Tags: []string{}})
	}
	return &AgentCard{
		Name:        w.name,
		Description: w.description,
		SupportedInterfaces: []AgentInterface{
			{URL: w.endpoint, ProtocolBinding: bindingJSONRPC, ProtocolVersion: Version10},
			{URL: w.endpoint, ProtocolBinding: bindingJSONRPC, ProtocolVersion: Version03},
		},
		Provider:           &AgentProvider{Organization: w.organization, URL: w.base},
		Version:            w.version,
		Capabilities:       AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "text/markdown"},
		Skills:             skills,
		SecuritySchemes: map[string]SecurityScheme{
			"bearer": {HTTPAuthSecurityScheme: &HTTPAuthSecurityScheme{Scheme: "bearer", BearerFormat: w.bearerFormat, Description: w.bearer}},
			"oauth": {OAuth2SecurityScheme: &OAuth2SecurityScheme{
				Description:       w.oauth,
				OAuth2MetadataURL: w.base + authServerMetadata,
				Flows: OAuthFlows{AuthorizationCode: &AuthorizationCodeOAuthFlow{
					AuthorizationURL: w.base + oauth.AuthorizePath, TokenURL: w.base + oauth.TokenPath, Scopes: w.scopes, PKCERequired: true}},
			}},
		},
		SecurityRequirements: []SecurityRequirement{
			{Schemes: map[string]StringList{"bearer": {}}},
			{Schemes: map[string]StringList{"oauth": {List: []string{hub.ScopeRead, hub.ScopeWrite}}}},
		},
	}
}

// cardFor is the agent's card in the revision r asks for (cardVersion).
func (s *Server) cardFor(r *http.Request, ea *tasks.ExposedAgent) any {
	if cardVersion(r) == Version10 {
		return s.card10Of(r, ea)
	}
	return s.cardOf(r, ea)
}

func (s *Server) card(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", versionHeader)
	ea, err := s.tasks.ExposedAgent(r.Context(), r.PathValue("owner"), r.PathValue("slug"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	writeJSON(w, s.cardFor(r, ea))
}

// directoryPage lists an owner's exposed agents' cards.
type directoryPage struct {
	Owner  string `json:"owner"`
	Agents []any  `json:"agents"`
}

func (s *Server) directory(w http.ResponseWriter, r *http.Request) {
	w.Header().Add("Vary", versionHeader)
	list, err := s.tasks.ExposedAgents(r.Context(), r.PathValue("owner"))
	if err != nil {
		s.httpError(w, r, err)
		return
	}
	page := directoryPage{Owner: list[0].Agent.OwnerHandle}
	for _, ea := range list {
		page.Agents = append(page.Agents, s.cardFor(r, ea))
	}
	writeJSON(w, page)
}
