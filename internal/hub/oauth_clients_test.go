package hub_test

import (
	"strings"
	"testing"

	"github.com/palaverhq/palaver/internal/hub"
)

// TestAuthorizeRedirectChecked: at /authorize, a loopback redirect URI of
// another port is taken only as registration takes one — with no fragment
// and no user info — and the person, not the client, is told.
func TestAuthorizeRedirectChecked(t *testing.T) {
	w := newWorld(t)
	c, err := w.hub.RegisterClient(ctx, hub.ClientSpec{Name: "Loopback client", RedirectURIs: []string{redirect}})
	if err != nil {
		t.Fatal(err)
	}
	for uri, says := range map[string]string{
		"http://127.0.0.1:61234/callback#frag": "has a fragment",
		"http://127.0.0.1:5555/callback#":      "has a fragment",
		"http://u@127.0.0.1:61234/callback":    "has user info",
		"http://u:p@127.0.0.1:5555/callback":   "has user info",
	} {
		r := authRequest(c.ID)
		r.RedirectURI = uri
		a, err := w.hub.CheckAuthorization(ctx, r)
		oauthCode(t, err, hub.OAuthInvalidRequest)
		if a != nil || !strings.Contains(hub.AsError(err).Msg, says) {
			t.Errorf("the redirect URI %s: %v (redirected: %v); want it refused to the person, saying it %s", uri, err, a != nil, says)
		}
	}
	r := authRequest(c.ID)
	r.RedirectURI = "http://127.0.0.1:61234/callback"
	if _, err := w.hub.CheckAuthorization(ctx, r); err != nil {
		t.Errorf("a loopback redirect URI on another port: %v", err)
	}
}
