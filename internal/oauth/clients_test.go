package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/oauth"
)

// TestAuthorizeRedirectChecked: at /authorize, a loopback redirect URI of
// another port is taken only as registration takes one — with no fragment
// and no user info — and the person, not the client, is told.
func TestAuthorizeRedirectChecked(t *testing.T) {
	w := newWorld(t)
	c, err := w.auth.RegisterClient(ctx, oauth.ClientSpec{Name: "Loopback client", RedirectURIs: []string{redirect}})
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
		a, err := w.auth.CheckAuthorization(ctx, r)
		oauthCode(t, err, oauth.OAuthInvalidRequest)
		if a != nil || !strings.Contains(hub.AsError(err).Msg, says) {
			t.Errorf("the redirect URI %s: %v (redirected: %v); want it refused to the person, saying it %s", uri, err, a != nil, says)
		}
	}
	r := authRequest(c.ID)
	r.RedirectURI = "http://127.0.0.1:61234/callback"
	if _, err := w.auth.CheckAuthorization(ctx, r); err != nil {
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
		_, err := w.auth.RegisterClient(ctx, oauth.ClientSpec{Name: name, RedirectURIs: []string{redirect}})
		oauthCode(t, err, oauth.OAuthInvalidMetadata)
		if want := fmt.Sprintf("client_name holds U+%04X, an invisible or text-direction character", r); !strings.Contains(hub.AsError(err).Msg, want) {
			t.Errorf("a name with U+%04X: %v; want it refused saying %q", r, err, want)
		}
	}
	for _, name := range []string{"Claude Code", "Café ☕", "日本語のクライアント", "عميل", "❤️ app", ""} {
		if _, err := w.auth.RegisterClient(ctx, oauth.ClientSpec{Name: name, RedirectURIs: []string{redirect}}); err != nil {
			t.Errorf("the name %q: %v", name, err)
		}
	}
	const docURL = "https://app.example/client.json"
	f := &fetcher{docs: map[string]string{docURL: `{"client_id":"` + docURL + `","client_name":"App\u202egnp.exe","redirect_uris":["` + redirect + `"]}`},
		addr: netip.MustParseAddr("93.184.215.14")}
	w.options = func(_ *hub.Options, o *oauth.AuthorityOptions) { o.Fetcher = f }
	w.reopen(t)
	_, err := w.auth.CheckAuthorization(ctx, authRequest(docURL))
	if oauthCode(t, err, oauth.OAuthInvalidClient); !strings.Contains(hub.AsError(err).Msg, "U+202E") {
		t.Errorf("a document naming its client with U+202E: %v", err)
	}
}

// failing is a fetcher whose every fetch fails with err.
type failing struct {
	err     error
	fetched int
}

func (f *failing) Fetch(context.Context, string, func(netip.Addr) bool, int64) ([]byte, error) {
	f.fetched++
	return nil, f.err
}

// TestDocumentFetchThrottled: a requester's address may have ten client
// documents fetched at once and then one a minute, as registrations — a
// failed fetch counts too — while another address is not held back.
func TestDocumentFetchThrottled(t *testing.T) {
	w := newWorld(t)
	f := &failing{err: &egress.Error{Msg: "it answered 404 Not Found, not 200 OK"}}
	w.options = func(_ *hub.Options, o *oauth.AuthorityOptions) { o.Fetcher = f }
	w.reopen(t)
	ask := func(i int, from string) error {
		r := authRequest(fmt.Sprintf("https://app.example/client-%d.json", i))
		r.From = from
		_, err := w.auth.CheckAuthorization(ctx, r)
		return err
	}
	for i := range 10 {
		if err := ask(i, "203.0.113.7"); hub.AsError(err).Code != oauth.OAuthInvalidClient || f.fetched != i+1 {
			t.Fatalf("fetch %d: %v, %d fetched; want it fetched and refused as invalid_client", i+1, err, f.fetched)
		}
	}
	err := ask(10, "203.0.113.7")
	var e *hub.Error
	if !errors.As(err, &e) || e.Code != "throttled" || e.Details["retry_after_s"] != 60 || f.fetched != 10 {
		t.Fatalf("the 11th fetch from one address: %v, %d fetched; want throttled with retry_after_s 60 and nothing fetched", err, f.fetched)
	}
	if err := ask(11, "198.51.100.1"); hub.AsError(err).Code != oauth.OAuthInvalidClient || f.fetched != 11 {
		t.Fatalf("a fetch for another address: %v, %d fetched", err, f.fetched)
	}
	w.clock.Advance(time.Minute)
	if err := ask(12, "203.0.113.7"); hub.AsError(err).Code != oauth.OAuthInvalidClient {
		t.Fatalf("a minute on: %v", err)
	}
}

// TestDocumentFetchErrorsInWords: what a person is told of a document that
// could not be fetched says what was wrong, without the network error's
// words, the resolver's address or the addresses a name resolved to; the
// cause goes to the log.
func TestDocumentFetchErrorsInWords(t *testing.T) {
	w := newWorld(t)
	var logs strings.Builder
	f := &failing{}
	w.options = func(_ *hub.Options, o *oauth.AuthorityOptions) {
		o.Fetcher, o.Logger = f, slog.New(slog.NewTextHandler(&logs, nil))
	}
	w.reopen(t)
	dial := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("93.184.215.14"), Port: 443}, Err: errors.New("connect: connection timed out")}
	for i, tc := range []struct {
		err  error
		says string
	}{
		{fmt.Errorf("Get %q: %w", "https://app.example/c.json", &net.DNSError{Err: "no such host", Name: "app.example", Server: "10.0.0.53:53", IsNotFound: true}),
			"its host name does not resolve to any address"},
		{&net.DNSError{Err: "i/o timeout", Name: "app.example", Server: "10.0.0.53:53", IsTimeout: true}, "its host name could not be looked up (DNS did not answer); try again later"},
		{&egress.RefusedError{Host: "app.example", Refusal: egress.Check(netip.MustParseAddr("10.1.2.3"))},
			"its host is at 10.1.2.3, a private-use address (10.0.0.0/8), which this server does not call"},
		{&egress.Error{Msg: "it is over 16384 bytes"}, "it is over 16384 bytes"},
		{dial, "it could not be reached"},
	} {
		f.err = tc.err
		_, err := w.auth.CheckAuthorization(ctx, authRequest(fmt.Sprintf("https://app.example/c%d.json", i)))
		msg := hub.AsError(err).Msg
		if want := "its metadata document could not be fetched: " + tc.says; !strings.HasSuffix(msg, want) || strings.Contains(msg, "10.0.0.53") || strings.Contains(msg, "93.184") || strings.Contains(msg, "Get ") {
			t.Errorf("fetching failed with %v: %q; want it to end %q", tc.err, msg, want)
		}
	}
	if !strings.Contains(logs.String(), "10.0.0.53") {
		t.Errorf("the log lacks the causes: %s", logs.String())
	}
}
