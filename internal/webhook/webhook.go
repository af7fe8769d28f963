// Package webhook is the webhooks of agents (DESIGN.md §18): the endpoints
// an owner gives an agent (Hooks: add, list, remove, enable), and the calls
// the hub queues for them with the events that make them, made from the
// outbox (Hooks.Run, Hooks.Deliver) — each endpoint apart, retried on
// Retry's schedule, its endpoint disabled once they failed for a day. A
// Sender makes each call: an https POST of its JSON payload, signed per
// Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)
// with its endpoint's secret, through the SSRF-safe egress client, and
// counts palaver_webhook_deliveries_total{outcome}. When a call is queued
// is the hub's rule (internal/hub/queue.go); this package manages and
// sends.
package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/palaverhq/palaver/internal/build"
	"github.com/palaverhq/palaver/internal/egress"
	"github.com/palaverhq/palaver/internal/hub"
)

// The Standard Webhooks headers of every call.
const (
	HeaderID        = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// maxAnswer is how much of an answer's body is read (and dropped), so the
// connection ends cleanly without a receiver making the server read more.
const maxAnswer = 64 << 10

// Options configure New.
type Options struct {
	// RootCAs are the certificates trusted for endpoints; nil: the
	// system's.
	RootCAs *x509.CertPool
	// Metrics receives palaver_webhook_deliveries_total{outcome} (§14);
	// nil: not counted.
	Metrics prometheus.Registerer
	// Resolver looks up endpoints' hosts when calling; nil: the system's.
	Resolver egress.Resolver
}

// Sender makes webhook calls: an https POST of the call's payload to its
// URL, signed with its secret, connecting to no address allow refuses,
// following no redirect, and giving up when ctx ends. It never retries:
// Hooks does.
type Sender struct {
	rootCAs    *x509.CertPool
	resolver   egress.Resolver
	deliveries *prometheus.CounterVec
}

// New returns a Sender, its counter registered in o.Metrics.
func New(o Options) (*Sender, error) {
	s := &Sender{rootCAs: o.RootCAs, resolver: o.Resolver, deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "palaver_webhook_deliveries_total",
		Help: "Webhook call attempts by outcome: delivered (a 2xx answer), failed (retried later), gave_up (failed for a day: the endpoint was disabled).",
	}, []string{"outcome"})}
	for _, o := range Outcomes {
		s.deliveries.WithLabelValues(o) // every outcome shows, at 0 until it happens
	}
	if o.Metrics != nil {
		if err := o.Metrics.Register(s.deliveries); err != nil {
			return nil, fmt.Errorf("register webhook metrics: %w", err)
		}
	}
	return s, nil
}

// Count adds n attempts with outcome to palaver_webhook_deliveries_total
// (Hooks.Run reports each call's outcome through it, from several
// goroutines at once).
func (s *Sender) Count(outcome string, n int) {
	s.deliveries.WithLabelValues(outcome).Add(float64(n))
}

// Sign is the webhook-signature of a call: "v1," and the base64 of
// HMAC-SHA256 keyed with the secret (whsec_ and base64) over
// id "." timestamp "." body, the timestamp in Unix seconds.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return "", fmt.Errorf("the webhook's secret: %w", err)
	}
	return wh.Sign(id, at, body)
}

// Result is how a call went.
type Result struct {
	Status   int   // the answer's HTTP status; 0 when none came
	Err      error // why no answer came
	Duration time.Duration
}

// Send POSTs the call, signed at at (its webhook-timestamp), and reports
// the answer's status, or why none came.
func (s *Sender) Send(ctx context.Context, c *hub.WebhookCall, at time.Time, allow func(netip.Addr) bool) Result {
	start := time.Now()
	status, err := s.send(ctx, c, at, allow)
	return Result{Status: status, Err: err, Duration: time.Since(start)}
}

func (s *Sender) send(ctx context.Context, c *hub.WebhookCall, at time.Time, allow func(netip.Addr) bool) (int, error) {
	sig, err := Sign(c.Secret, c.ID, at, c.Payload)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(c.Payload))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Palaver-Webhooks/"+build.Current().Version)
	req.Header.Set(HeaderID, c.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	// The hub's own deadline bounds the call; the client's is a backstop.
	resp, err := egress.Client(egress.Options{Allow: allow, RootCAs: s.rootCAs, Timeout: Timeout, Resolver: s.resolver}).Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // without "Post <url>:", which the log shows beside it
		}
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	return resp.StatusCode, nil
}
