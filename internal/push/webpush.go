package push

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"
)

// MaxPayload is the most bytes of JSON a notification may take in a Web
// Push message: a 4096-byte aes128gcm record (what every push service
// takes, RFC 8291 §4) less its 86-byte header, 16-byte tag and padding
// delimiter. Every message is padded to that size, so its length tells
// nothing of what it says.
const MaxPayload = 4096 - 86 - 16 - 1

// VAPIDKeys are the server's key pair for VAPID (RFC 8292): a P-256 key,
// each half in unpadded URL-safe base64. Public is what a browser is given
// as applicationServerKey when it subscribes. The hub keeps the pair in
// its database; one pair serves every subscription, and a new pair makes
// every existing subscription fail.
type VAPIDKeys struct {
	Public  string // the uncompressed point: 65 bytes
	Private string // the scalar: 32 bytes
}

// NewVAPIDKeys makes a new VAPID key pair.
func NewVAPIDKeys() (VAPIDKeys, error) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return VAPIDKeys{}, err
	}
	return VAPIDKeys{Public: base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()),
		Private: base64.RawURLEncoding.EncodeToString(k.Bytes())}, nil
}

// Check says what is wrong with k, or nil: both halves must decode, and
// Public must be Private's.
func (k VAPIDKeys) Check() error {
	d, err := base64.RawURLEncoding.DecodeString(k.Private)
	if err != nil {
		return errors.New("the VAPID private key is not unpadded URL-safe base64")
	}
	priv, err := ecdh.P256().NewPrivateKey(d)
	if err != nil {
		return errors.New("the VAPID private key is not a P-256 key")
	}
	if base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes()) != k.Public {
		return errors.New("the VAPID public key is not the private key's")
	}
	return nil
}

// Subscription is a browser's push subscription, as PushSubscription's
// toJSON gives it: where to send, and the keys to encrypt for.
type Subscription struct {
	Endpoint string // the push service's https URL for this browser
	P256dh   string // the browser's P-256 public key, URL-safe base64
	Auth     string // its 16-byte authentication secret, URL-safe base64
}

// Check says what is wrong with s, or nil, so a subscription that could
// never be sent to is refused when it is saved.
func (s Subscription) Check() error {
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("a push subscription's endpoint is an https URL, not %q", s.Endpoint)
	}
	if p, err := decodeKey(s.P256dh); err != nil {
		return errors.New("a push subscription's p256dh key is not URL-safe base64")
	} else if _, err := ecdh.P256().NewPublicKey(p); err != nil {
		return errors.New("a push subscription's p256dh key is not a P-256 public key")
	}
	if a, err := decodeKey(s.Auth); err != nil || len(a) != 16 {
		return errors.New("a push subscription's auth secret is not 16 bytes of URL-safe base64")
	}
	return nil
}

// decodeKey reads URL-safe base64, padded or not, as browsers give both.
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// WebPush is what a Web Push call needs besides the notification: where it
// goes, and as whom it is sent.
type WebPush struct {
	Subscription Subscription
	VAPID        VAPIDKeys
	// Subject is whom a push service may contact about this server's
	// messages (the VAPID JWT's sub): a mailto: or https: URL.
	Subject string
	// TTL is how long the push service keeps the message for a browser
	// that is not connected (0: deliver now or never), in whole seconds.
	TTL time.Duration
}

func (w *WebPush) check() error {
	if err := w.Subscription.Check(); err != nil {
		return err
	}
	if err := w.VAPID.Check(); err != nil {
		return err
	}
	u, err := url.Parse(w.Subject)
	switch {
	case err != nil, u.Scheme == "mailto" && !strings.Contains(u.Opaque, "@"), u.Scheme == "https" && u.Host == "",
		u.Scheme != "mailto" && u.Scheme != "https":
		return fmt.Errorf("the VAPID subject is a mailto: or https: URL, not %q", w.Subject)
	}
	if w.TTL < 0 {
		return fmt.Errorf("a TTL is 0 or more, not %s", w.TTL)
	}
	return nil
}

// urgency is RFC 8030's Urgency for each priority.
var urgency = map[Priority]webpush.Urgency{
	PriorityLow: webpush.UrgencyLow, PriorityNormal: webpush.UrgencyNormal, PriorityHigh: webpush.UrgencyHigh,
}

// SendWebPush sends n to one subscription (§19): its JSON encrypted for
// the browser (aes128gcm, RFC 8291), with the server's VAPID signature
// (RFC 8292: a JWT for the push service's origin, valid for 12 hours), the
// TTL, the priority's Urgency and the ID's Topic (RFC 8030 §5), through
// the egress client, connecting to no address allow refuses. It never
// retries: the hub does, unless the Result says the subscription is Gone.
func (s *Sender) SendWebPush(ctx context.Context, w WebPush, n Notification, allow func(netip.Addr) bool) Result {
	start := time.Now()
	if err := w.check(); err != nil {
		return Result{Err: err}
	}
	if err := n.Check(); err != nil {
		return Result{Err: err}
	}
	n.Priority = n.priority()
	payload, err := json.Marshal(n)
	if err != nil {
		return Result{Err: err}
	}
	if len(payload) > MaxPayload {
		return Result{Err: fmt.Errorf("the notification is %d bytes of JSON, more than the %d a push message holds: shorten its title or summary", len(payload), MaxPayload)}
	}
	o := &webpush.Options{
		HTTPClient: s.client(allow),
		// webpush-go reads a subject that is not https: as an address and
		// adds "mailto:" itself.
		Subscriber:      strings.TrimPrefix(w.Subject, "mailto:"),
		TTL:             int(w.TTL / time.Second),
		Urgency:         urgency[n.Priority],
		VAPIDPublicKey:  w.VAPID.Public,
		VAPIDPrivateKey: w.VAPID.Private,
	}
	if n.ID != "" {
		o.Topic = key(n.ID)
	}
	resp, err := webpush.SendNotificationWithContext(ctx, payload, &webpush.Subscription{Endpoint: w.Subscription.Endpoint,
		Keys: webpush.Keys{P256dh: w.Subscription.P256dh, Auth: w.Subscription.Auth}}, o)
	r := finish(resp, err, start)
	r.Gone = r.Status == http.StatusNotFound || r.Status == http.StatusGone
	return r
}
