package hub_test

import (
	"fmt"
	"net/netip"
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

// TestClientNameHidden: a client name holding a character that shows
// nothing or turns the text's direction is refused — by registration and
// in a client's metadata document — naming the character; names in any
// script, with emoji, are taken.
func TestClientNameHidden(t *testing.T) {
	w := newWorld(t)
	var hidden []rune
	for _, span := range [][2]rune{{0x202A, 0x202E}, {0x2066, 0x2069}, {0x200B, 0x200F}} {
		for r := span[0]; r <= span[1]; r++ {
			hidden = append(hidden, r)
		}
	}
	hidden = append(hidden, 0xFEFF, 0x2060, 0x061C, 0x00AD, 0x3164, 0x2028, '\n', 0x7F)
	for _, r := range hidden {
		name := "Claude" + string(r) + " Code"
		_, err := w.hub.RegisterClient(ctx, hub.ClientSpec{Name: name, RedirectURIs: []string{redirect}})
		oauthCode(t, err, hub.OAuthInvalidMetadata)
		if want := fmt.Sprintf("client_name holds U+%04X, an invisible or text-direction character", r); !strings.Contains(hub.AsError(err).Msg, want) {
			t.Errorf("a name with U+%04X: %v; want it refused saying %q", r, err, want)
		}
	}
	for _, name := range []string{"Claude Code", "Café ☕", "日本語のクライアント", "عميل", "❤️ app", ""} {
		if _, err := w.hub.RegisterClient(ctx, hub.ClientSpec{Name: name, RedirectURIs: []string{redirect}}); err != nil {
			t.Errorf("the name %q: %v", name, err)
		}
	}
	const docURL = "https://app.example/client.json"
	f := &fetcher{docs: map[string]string{docURL: `{"client_id":"` + docURL + `","client_name":"App\u202egnp.exe","redirect_uris":["` + redirect + `"]}`},
		addr: netip.MustParseAddr("93.184.215.14")}
	w.options = func(o *hub.Options) { o.Fetcher = f }
	w.reopen(t)
	_, err := w.hub.CheckAuthorization(ctx, authRequest(docURL))
	if oauthCode(t, err, hub.OAuthInvalidClient); !strings.Contains(hub.AsError(err).Msg, "U+202E") {
		t.Errorf("a document naming its client with U+202E: %v", err)
	}
}
