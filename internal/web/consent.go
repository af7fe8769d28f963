package web

import (
	"context"
	"net/url"
	"strings"

	"github.com/palaverhq/palaver/internal/httpx"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

// The consent page (§2, §10.6): an OAuth client asks to act as one of the
// person's agents. Signed in first (the route is not public), they see
// which client asks and where it sends them back, pick one of their agents
// (or create one here) and which of the asked scopes to give, and allow or
// deny; the browser then goes back to the client.

// consentPage is what the page shows, and the request it carries through
// its form.
type consentPage struct {
	*oauth.Authorization
	Params       []consentParam
	Redirect     string // the host the browser goes back to
	ResourceName string // what the resource its tokens will be for is
	Agent        string // what was picked, shown again after an error
	NewAgent     string
}

type consentParam struct{ Name, Value string }

// authRequest is the authorization request a consent request carries: in
// the query (the page) or the form (its answer).
func (w *Web) authRequest(r *request, q url.Values) oauth.AuthRequest {
	iss := strings.TrimSuffix(httpx.BaseURL(w.base, r.Request), "/")
	req := oauth.ParseAuthRequest(q, iss, oauth.Resources(iss, w.resources))
	req.From = w.clientAddr(r.Request)
	return req
}

func (w *Web) consentData(a *oauth.Authorization, q url.Values) consentPage {
	p := consentPage{Authorization: a}
	for _, name := range oauth.AuthParams {
		if v := q.Get(name); v != "" {
			p.Params = append(p.Params, consentParam{name, v})
		}
	}
	if u, err := url.Parse(a.Request.RedirectURI); err == nil {
		p.Redirect = u.Host
	}
	p.ResourceName = resourceName(a.Request.Issuer, a.Resource)
	return p
}

// resourceName says what a resource of this server is: the server as a
// whole, the A2A endpoints, or an MCP endpoint (a token serves only the
// one it was issued for).
func resourceName(issuer, resource string) string {
	switch {
	case hub.SameResource(resource, issuer):
		return "every endpoint of this server, MCP and A2A"
	case hub.SameResource(resource, issuer+hub.A2AResourcePath):
		return "the A2A endpoints of the agents here"
	}
	return "the MCP endpoint"
}

func (w *Web) consent(ctx context.Context, r *request) (*reply, error) {
	q := r.URL.Query()
	a, err := w.oauth.ConsentFor(ctx, r.user, w.authRequest(r, q))
	if err != nil {
		if a != nil {
			return &reply{redirect: a.ErrorRedirect(err)}, nil
		}
		return nil, err
	}
	return &reply{page: "consent", data: w.consentData(a, q)}, nil
}

// decideConsent answers the client: allowed (with a code) or denied.
func (w *Web) decideConsent(ctx context.Context, r *request) (*reply, error) {
	q := r.PostForm
	c := oauth.Consent{Deny: form(r, "decision") == "deny", Scopes: q["grant"]}
	if pick := form(r, "agent"); pick == "new" {
		c.NewAgent, c.NewDescription = strings.TrimSpace(form(r, "new_slug")), form(r, "new_description")
	} else {
		c.Agent = pick
	}
	to, err := w.oauth.Authorize(ctx, r.user, w.authRequest(r, q), c)
	if err != nil {
		var p any = nil
		if a, aerr := w.oauth.ConsentFor(ctx, r.user, w.authRequest(r, q)); aerr == nil {
			d := w.consentData(a, q)
			d.Agent, d.NewAgent = form(r, "agent"), c.NewAgent
			p = d
		} else {
			return nil, err
		}
		return nil, &again{page: "consent", data: p, err: err}
	}
	return &reply{redirect: to}, nil
}

// formActions lets the consent form's answer redirect to the client (a
// browser checks form-action on the redirect after a form).
func (p consentPage) formActions() string {
	u, err := url.Parse(p.Request.RedirectURI)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
