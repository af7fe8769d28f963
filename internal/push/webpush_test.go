package push_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/push"
	"github.com/palaverhq/palaver/internal/push/pushtest"
)

var b64 = base64.RawURLEncoding

// TestDecryptRFC8291Example: the test's decryption reads RFC 8291's own
// example (Appendix A), so it judges what the sender sends by the RFC.
func TestDecryptRFC8291Example(t *testing.T) {
	ua, err := ecdh.P256().NewPrivateKey(must(b64.DecodeString("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")))
	if err != nil {
		t.Fatal(err)
	}
	if got := b64.EncodeToString(ua.PublicKey().Bytes()); got != "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4" {
		t.Fatalf("ua_public = %s", got)
	}
	header := must(b64.DecodeString("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"))
	ciphertext := must(b64.DecodeString("8pfeW0KbunFT06SuDKoJH9Ql87S1QUrdirN6GcG7sFz1y1sqLgVi1VhjVkHsUoEsbI_0LpXMuGvnzQ"))
	got, err := pushtest.Browser{Key: ua, Auth: must(b64.DecodeString("BTBZMqHH6r4Tts7J_aSIgg"))}.Decrypt(append(header, ciphertext...))
	if want := "When I grow up, I want to be a watermelon"; err != nil || string(got) != want {
		t.Errorf("decrypt = %q, %v; want %q", got, err, want)
	}
}

func testKeys(t *testing.T) push.VAPIDKeys {
	t.Helper()
	k, err := push.NewVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSendWebPush: a notification reaches the push service as RFC 8030
// asks — a POST of an aes128gcm message padded to 4096 bytes, with TTL,
// Urgency and Topic — that the browser's keys decrypt to the
// notification's JSON, signed for the push service's origin with the
// server's VAPID key and the subject as given.
func TestSendWebPush(t *testing.T) {
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	s := world(ps)
	b := pushtest.NewBrowser(t)
	keys := testKeys(t)
	for _, subject := range []string{"mailto:owner@example.com", "https://hub.example.com/about"} {
		w := push.WebPush{Subscription: b.Subscription(ps.URL + "/wpush/v2/abc"), VAPID: keys, Subject: subject, TTL: 90 * time.Minute}
		n := push.Notification{ID: "appr_0123456789abcdefghjkmnpqrs", Title: "alice/planner asks", Summary: "May I run the migration?",
			Link: "https://hub.example.com/approvals/q_1", Priority: push.PriorityHigh, Tags: []string{"question"},
			Action: &push.Action{Label: "Answer", URL: "https://hub.example.com/approvals/q_1#answer"}}
		res := s.SendWebPush(context.Background(), w, n, admitted("push.test"))
		if !res.Delivered() || res.Status != http.StatusCreated || res.Gone || res.Err != nil {
			t.Fatalf("SendWebPush = %+v", res)
		}
		r := ps.Last(t)
		headers := map[string]string{}
		for _, h := range []string{"Content-Encoding", "Content-Type", "TTL", "Urgency", "Topic"} {
			headers[h] = r.Header.Get(h)
		}
		if diff := cmp.Diff(map[string]string{"Content-Encoding": "aes128gcm", "Content-Type": "application/octet-stream",
			"TTL": "5400", "Urgency": "high", "Topic": "appr_0123456789abcdefghjkmnpqrs"}, headers); r.Method != http.MethodPost || r.Path != "/wpush/v2/abc" || diff != "" {
			t.Errorf("%s %s, headers (-want +got):\n%s", r.Method, r.Path, diff)
		}
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "Palaver/") {
			t.Errorf("User-Agent %q: webpush-go did not call through the Sender's client", ua)
		}
		if len(r.Body) != 4096 {
			t.Errorf("the message is %d bytes; want every one padded to 4096", len(r.Body))
		}
		plain, err := b.Decrypt(r.Body)
		if err != nil {
			t.Fatalf("decrypt: %v", err)
		}
		var got map[string]any
		if err := json.Unmarshal(plain, &got); err != nil {
			t.Fatalf("the payload %q: %v", plain, err)
		}
		want := map[string]any{"id": "appr_0123456789abcdefghjkmnpqrs", "title": "alice/planner asks", "summary": "May I run the migration?",
			"link": "https://hub.example.com/approvals/q_1", "priority": "high", "tags": []any{"question"},
			"action": map[string]any{"label": "Answer", "url": "https://hub.example.com/approvals/q_1#answer"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the payload (-want +got):\n%s", diff)
		}
		pushtest.CheckVAPID(t, r.Header.Get("Authorization"), keys.Public, ps.URL, subject)
	}
}

// TestWebPushPriorityAndTopic: each priority is its Urgency (none given is
// normal); an id that is not a Topic (over 32 characters, or outside the
// URL-safe alphabet) is sent as a 32-character digest of itself, the same
// each time; no id, no Topic.
func TestWebPushPriorityAndTopic(t *testing.T) {
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	s := world(ps)
	b := pushtest.NewBrowser(t)
	w := push.WebPush{Subscription: b.Subscription(ps.URL + "/p"), VAPID: testKeys(t), Subject: "mailto:a@example.com"}
	send := func(n push.Notification) (pushtest.Request, map[string]any) {
		t.Helper()
		if res := s.SendWebPush(context.Background(), w, n, admitted("push.test")); !res.Delivered() {
			t.Fatalf("SendWebPush = %+v", res)
		}
		r := ps.Last(t)
		var payload map[string]any
		json.Unmarshal(must(b.Decrypt(r.Body)), &payload)
		return r, payload
	}
	for p, want := range map[push.Priority]string{"": "normal", push.PriorityLow: "low", push.PriorityNormal: "normal", push.PriorityHigh: "high"} {
		r, payload := send(push.Notification{ID: "q_1", Title: "t", Priority: p})
		if r.Header.Get("Urgency") != want || payload["priority"] != want || r.Header.Get("TTL") != "0" {
			t.Errorf("priority %q: Urgency %q, payload's %v, TTL %q; want %q and TTL 0", p, r.Header.Get("Urgency"), payload["priority"], r.Header.Get("TTL"), want)
		}
	}
	long := "notification-of-an-item-with-a-long-name"
	r1, _ := send(push.Notification{ID: long, Title: "t"})
	r2, _ := send(push.Notification{ID: long, Title: "t"})
	r3, _ := send(push.Notification{ID: "q 1", Title: "t"})
	topic := r1.Header.Get("Topic")
	if len(topic) != 32 || topic != r2.Header.Get("Topic") || strings.Trim(topic, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" ||
		len(r3.Header.Get("Topic")) != 32 || r3.Header.Get("Topic") == topic {
		t.Errorf("Topics %q, %q, %q; want two equal 32-character URL-safe ones and a third apart", topic, r2.Header.Get("Topic"), r3.Header.Get("Topic"))
	}
	if r, _ := send(push.Notification{Title: "t"}); r.Header.Values("Topic") != nil {
		t.Errorf("no id sent Topic %q", r.Header.Get("Topic"))
	}
}

// TestWebPushAnswers: 404 and 410 say the subscription is gone; any other
// failure is to be retried.
func TestWebPushAnswers(t *testing.T) {
	ps := pushtest.NewService(t, "push.test", 0)
	s := world(ps)
	w := push.WebPush{Subscription: pushtest.NewBrowser(t).Subscription(ps.URL + "/p"), VAPID: testKeys(t), Subject: "mailto:a@example.com"}
	for _, tc := range []struct {
		status          int
		delivered, gone bool
	}{
		{http.StatusCreated, true, false},
		{http.StatusGone, false, true},
		{http.StatusNotFound, false, true},
		{http.StatusInternalServerError, false, false},
		{http.StatusTooManyRequests, false, false},
		{http.StatusForbidden, false, false},
	} {
		ps.Answer(tc.status)
		res := s.SendWebPush(context.Background(), w, push.Notification{Title: "t"}, admitted("push.test"))
		ps.Last(t)
		if res.Status != tc.status || res.Err != nil || res.Delivered() != tc.delivered || res.Gone != tc.gone {
			t.Errorf("an answer of %d: %+v, delivered %v; want delivered %v, gone %v", tc.status, res, res.Delivered(), tc.delivered, tc.gone)
		}
	}
}

// TestWebPushEgress: webpush-go's request goes through the egress client:
// a push service whose name resolves to a private address is refused
// before any connection unless the admin let its host through, and plain
// http is never called.
func TestWebPushEgress(t *testing.T) {
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	s := world(ps)
	w := push.WebPush{Subscription: pushtest.NewBrowser(t).Subscription(ps.URL + "/p"), VAPID: testKeys(t), Subject: "mailto:a@example.com"}
	n := push.Notification{Title: "t"}

	res := s.SendWebPush(context.Background(), w, n, egress.NewPolicy(nil).Allows("push.test"))
	var refused *egress.RefusedError
	if !errors.As(res.Err, &refused) || res.Status != 0 || res.Gone ||
		egress.Describe(res.Err) != "its host is at 127.0.0.1, a loopback address (127.0.0.0/8), which this server does not call" {
		t.Errorf("a private address: %+v (%q); want refused", res, egress.Describe(res.Err))
	}
	if res := s.SendWebPush(context.Background(), w, n, func(netip.Addr) bool { return false }); res.Err == nil {
		t.Errorf("a guard that allows nothing: %+v", res)
	}
	if got := ps.Requests(); len(got) != 0 {
		t.Fatalf("the push service took %d requests from refused calls", len(got))
	}
	if res := s.SendWebPush(context.Background(), w, n, admitted("push.test")); !res.Delivered() {
		t.Errorf("the admin's host: %+v", res)
	}
	ps.Last(t)
}

// TestWebPushRefusesBadInput: a notification, subscription, key pair,
// subject or TTL that could not be sent is refused with what is wrong,
// and nothing is sent.
func TestWebPushRefusesBadInput(t *testing.T) {
	ps := pushtest.NewService(t, "push.test", http.StatusCreated)
	s := world(ps)
	b := pushtest.NewBrowser(t)
	good := push.WebPush{Subscription: b.Subscription(ps.URL + "/p"), VAPID: testKeys(t), Subject: "mailto:a@example.com"}
	other := testKeys(t)
	base, _ := json.Marshal(push.Notification{Title: "t", Priority: push.PriorityNormal})
	full := push.Notification{Title: "t", Summary: strings.Repeat("a", push.MaxPayload-len(base)-len(`,"summary":""`))}
	for _, tc := range []struct {
		name string
		edit func(*push.WebPush, *push.Notification)
		want string
	}{
		{"no title", func(_ *push.WebPush, n *push.Notification) { n.Title = " " }, "a notification needs a title"},
		{"priority", func(_ *push.WebPush, n *push.Notification) { n.Priority = "urgent" }, `a notification's priority is low, normal or high, not "urgent"`},
		{"link", func(_ *push.WebPush, n *push.Notification) { n.Link = "/approvals" }, `its link: "/approvals" is not an absolute http or https URL`},
		{"tag", func(_ *push.WebPush, n *push.Notification) { n.Tags = []string{"a,b"} }, `a notification's tag is a word without commas, not "a,b"`},
		{"action", func(_ *push.WebPush, n *push.Notification) { n.Action = &push.Action{URL: "https://x.example"} }, "a notification's action needs a label"},
		{"action url", func(_ *push.WebPush, n *push.Notification) {
			n.Action = &push.Action{Label: "Go", URL: "javascript:alert(1)"}
		},
			`its action's URL: "javascript:alert(1)" is not an absolute http or https URL`},
		{"too big", func(_ *push.WebPush, n *push.Notification) { *n = full; n.Summary += "a" },
			fmt.Sprintf("the notification is %d bytes of JSON, more than the %d a push message holds: shorten its title or summary", push.MaxPayload+1, push.MaxPayload)},
		{"http endpoint", func(w *push.WebPush, _ *push.Notification) { w.Subscription.Endpoint = "http://push.test/p" },
			`a push subscription's endpoint is an https URL, not "http://push.test/p"`},
		{"p256dh", func(w *push.WebPush, _ *push.Notification) {
			w.Subscription.P256dh = b64.EncodeToString(make([]byte, 65))
		},
			"a push subscription's p256dh key is not a P-256 public key"},
		{"auth", func(w *push.WebPush, _ *push.Notification) { w.Subscription.Auth = b64.EncodeToString(make([]byte, 8)) },
			"a push subscription's auth secret is not 16 bytes of URL-safe base64"},
		{"keys", func(w *push.WebPush, _ *push.Notification) { w.VAPID.Public = other.Public }, "the VAPID public key is not the private key's"},
		{"subject", func(w *push.WebPush, _ *push.Notification) { w.Subject = "owner@example.com" },
			`the VAPID subject is a mailto: or https: URL, not "owner@example.com"`},
		{"ttl", func(w *push.WebPush, _ *push.Notification) { w.TTL = -time.Second }, "a TTL is 0 or more, not -1s"},
	} {
		w, n := good, push.Notification{Title: "t"}
		tc.edit(&w, &n)
		if res := s.SendWebPush(context.Background(), w, n, admitted("push.test")); res.Err == nil || res.Err.Error() != tc.want || res.Status != 0 {
			t.Errorf("%s: %+v; want %q", tc.name, res, tc.want)
		}
	}
	if got := ps.Requests(); len(got) != 0 {
		t.Fatalf("the push service took %d requests", len(got))
	}
	// The largest notification that fits is sent whole.
	if res := s.SendWebPush(context.Background(), good, full, admitted("push.test")); !res.Delivered() {
		t.Fatalf("a notification of MaxPayload bytes: %+v", res)
	}
	if plain := must(b.Decrypt(ps.Last(t).Body)); len(plain) != push.MaxPayload || !bytes.Contains(plain, []byte(full.Summary)) {
		t.Errorf("a notification of MaxPayload bytes arrived as %d bytes", len(plain))
	}
}

// TestVAPIDKeys: a new pair is a P-256 key in unpadded URL-safe base64
// whose halves match, and every pair is new.
func TestVAPIDKeys(t *testing.T) {
	a, b := testKeys(t), testKeys(t)
	pub, priv := must(b64.DecodeString(a.Public)), must(b64.DecodeString(a.Private))
	if len(pub) != 65 || pub[0] != 4 || len(priv) != 32 || a.Check() != nil || a == b {
		t.Errorf("NewVAPIDKeys = %+v (%d, %d bytes), check %v; and again %+v", a, len(pub), len(priv), a.Check(), b)
	}
	if err := (push.VAPIDKeys{Public: a.Public, Private: b.Private}).Check(); err == nil {
		t.Error("halves of two pairs passed the check")
	}
	if err := (push.VAPIDKeys{Public: a.Public, Private: "not base64!"}).Check(); err == nil {
		t.Error("a private key that is not base64 passed the check")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
