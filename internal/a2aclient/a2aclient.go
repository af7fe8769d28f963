// Package a2aclient is Palaver as an A2A client (DESIGN.md §18, "Out"):
// it fetches a remote agent's Agent Card through the egress guard, picks
// the card's A2A 1.0 JSON-RPC interface (or its 0.3 one when that is all
// it offers), sends a message and reads the answer — a message or a task
// — and asks after a task until it ends (Client). The wire types are
// internal/a2a's (1.0) and a2a-go's (0.3). Remotes are the remote agents
// their owners add, list and remove, and the outbox of the messages to
// them: when a call is queued is the hub's rule (internal/hub/queue.go);
// making it, retrying it, and what its answer becomes are this package's.
package a2aclient

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/a2a"
	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/egress"
)

// Limits of every call.
const (
	MaxCard   = 256 << 10        // bytes of an Agent Card read
	MaxAnswer = 1 << 20          // bytes of a JSON-RPC answer read
	Timeout   = 20 * time.Second // one call, from connecting to the answer's last byte
)

// Options configure New.
type Options struct {
	// RootCAs are the certificates trusted; nil: the system's.
	RootCAs *x509.CertPool
	// Resolver looks up hosts; nil: the system's. Tests give their own.
	Resolver egress.Resolver
}

// Client calls remote A2A agents.
type Client struct {
	rootCAs  *x509.CertPool
	resolver egress.Resolver
}

// New returns a Client.
func New(o Options) *Client { return &Client{rootCAs: o.RootCAs, resolver: o.Resolver} }

// Allow is the guard of one call: whether host may be reached at ip.
type Allow func(host string, ip netip.Addr) bool

// Card is what Palaver keeps of a remote agent's card: who it is, and the
// interface it is called at.
type Card struct {
	Name, Description, Provider string
	Skills                      []string // the skills' names
	Endpoint                    string   // the JSON-RPC interface's URL
	Version                     string   // its A2A revision: a2a.Version10 or a2a.Version03
}

// FetchCard fetches and checks the Agent Card at cardURL, presenting
// credential (an Authorization header's value) when not "".
func (c *Client) FetchCard(ctx context.Context, cardURL, credential string, allow Allow) (*Card, error) {
	u, err := url.Parse(cardURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the card's address must be an https URL, like https://agent.example/.well-known/agent-card.json; got %q", cardURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("A2A-Version", a2a.Version10)
	body, err := c.do(req, credential, allow, MaxCard)
	if err != nil {
		return nil, fmt.Errorf("fetching the agent card: %w", err)
	}
	return parseCard(body)
}

// card03 is what a 0.3 card says of its interfaces.
type card03 struct {
	URL                  string `json:"url"`
	ProtocolVersion      string `json:"protocolVersion"`
	PreferredTransport   string `json:"preferredTransport"`
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"`
}

// parseCard reads a card, 1.0 or 0.3, and picks its interface: 1.0
// JSON-RPC first, else 0.3 JSON-RPC.
func parseCard(body []byte) (*Card, error) {
	var c10 a2a.AgentCard
	if err := json.Unmarshal(body, &c10); err != nil {
		return nil, fmt.Errorf("the agent card is not a JSON object of the A2A card's shape: %v", err)
	}
	if strings.TrimSpace(c10.Name) == "" {
		return nil, errors.New("the agent card names no agent (its name is empty)")
	}
	card := &Card{Name: c10.Name, Description: c10.Description}
	if c10.Provider != nil {
		card.Provider = c10.Provider.Organization
	}
	for _, s := range c10.Skills {
		card.Skills = append(card.Skills, s.Name)
	}
	var v03 string
	for _, i := range c10.SupportedInterfaces {
		if !strings.EqualFold(i.ProtocolBinding, "JSONRPC") {
			continue
		}
		switch majorMinor(i.ProtocolVersion) {
		case a2a.Version10:
			card.Endpoint, card.Version = i.URL, a2a.Version10
		case a2a.Version03:
			if v03 == "" {
				v03 = i.URL
			}
		}
		if card.Version == a2a.Version10 {
			break
		}
	}
	if card.Endpoint == "" && v03 == "" {
		var c03 card03
		_ = json.Unmarshal(body, &c03)
		if majorMinor(c03.ProtocolVersion) == a2a.Version03 {
			if c03.URL != "" && (c03.PreferredTransport == "" || strings.EqualFold(c03.PreferredTransport, "JSONRPC")) {
				v03 = c03.URL
			}
			for _, i := range c03.AdditionalInterfaces {
				if v03 == "" && strings.EqualFold(i.Transport, "JSONRPC") {
					v03 = i.URL
				}
			}
		}
	}
	if card.Endpoint == "" && v03 != "" {
		card.Endpoint, card.Version = v03, a2a.Version03
	}
	if card.Endpoint == "" {
		return nil, errors.New("the agent card offers no JSON-RPC interface of A2A 1.0 or 0.3, the ones Palaver calls")
	}
	if u, err := url.Parse(card.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the agent card's JSON-RPC interface is not an https URL: %q", card.Endpoint)
	}
	return card, nil
}

// majorMinor is a revision's major.minor: "1.0.1" → "1.0".
func majorMinor(v string) string {
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	if len(parts) < 2 {
		if len(parts) == 1 && parts[0] != "" {
			return parts[0] + ".0"
		}
		return ""
	}
	return parts[0] + "." + parts[1]
}

// do makes one call through the egress guard and reads at most limit
// bytes of a 2xx answer.
func (c *Client) do(req *http.Request, credential string, allow Allow, limit int64) ([]byte, error) {
	req.Header.Set("User-Agent", "Palaver/"+build.Current().Version)
	if credential != "" {
		req.Header.Set("Authorization", credential)
	}
	host := req.URL.Hostname()
	hc := egress.Client(egress.Options{Allow: func(ip netip.Addr) bool { return allow(host, ip) }, RootCAs: c.rootCAs,
		Timeout: Timeout, Resolver: c.resolver})
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("the answer is over %d bytes", limit)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{Status: resp.StatusCode}
	}
	return body, nil
}

// StatusError is the error of an answer that is not 2xx.
type StatusError struct{ Status int }

func (e *StatusError) Error() string { return fmt.Sprintf("it was answered %d", e.Status) }

// rpc calls method with params at the card's endpoint and decodes the
// result into out.
func (c *Client) rpc(ctx context.Context, card *Card, credential string, allow Allow, method string, params, out any) error {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, card.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if card.Version == a2a.Version10 {
		req.Header.Set("A2A-Version", a2a.Version10)
	}
	answer, err := c.do(req, credential, allow, MaxAnswer)
	if err != nil {
		return err
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(answer, &env); err != nil {
		return fmt.Errorf("the answer is not JSON-RPC: %v", err)
	}
	if env.Error != nil {
		return env.Error
	}
	if len(env.Result) == 0 {
		return errors.New("the answer has neither a result nor an error")
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("the answer's result is not of the A2A shape: %v", err)
	}
	return nil
}

// RPCError is a JSON-RPC error the remote answered with. It is final: the
// same request would be refused again.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("the agent refused: %s (%d)", e.Message, e.Code)
}
