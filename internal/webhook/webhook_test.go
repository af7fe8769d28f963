package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/webhook"
)

// TestSignTestVector: Sign gives the signature the Standard Webhooks
// specification publishes for its test vector.
func TestSignTestVector(t *testing.T) {
	got, err := webhook.Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Errorf("Sign = %q, %v; want %q", got, err, want)
	}
	if _, err := webhook.Sign("whsec_not base64!", "id", time.Unix(0, 0), nil); err == nil {
		t.Error("a secret that is not base64 signed")
	}
}

// TestSend: a call is a POST of the payload with the three headers, its
// signature checked here by hand; the answer's status comes back; an
// address the hub refuses is never connected to; and the counter counts
// what it is told.
func TestSend(t *testing.T) {
	var got *http.Request
	var body []byte
	status := http.StatusNoContent
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, must(io.ReadAll(r.Body))
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	reg := prometheus.NewRegistry()
	s, err := webhook.New(webhook.Options{RootCAs: roots, Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("0123456789abcdef0123456789abcdef")
	c := &hub.WebhookCall{ID: "whc_1", URL: srv.URL + "/hook", Payload: []byte(`{"type":"message.new"}`),
		Secret: "whsec_" + base64.StdEncoding.EncodeToString(key)}
	at := time.Unix(1_800_000_000, 0)
	all := func(netip.Addr) bool { return true }

	res := s.Send(context.Background(), c, at, all)
	if res.Err != nil || res.Status != http.StatusNoContent || got == nil {
		t.Fatalf("Send = %+v", res)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("whc_1.1800000000." + `{"type":"message.new"}`))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got.Method != http.MethodPost || got.URL.Path != "/hook" || string(body) != `{"type":"message.new"}` ||
		got.Header.Get("Content-Type") != "application/json" || got.Header.Get("webhook-id") != "whc_1" ||
		got.Header.Get("webhook-timestamp") != "1800000000" || got.Header.Get("webhook-signature") != want {
		t.Errorf("the call: %s %s %q, headers %v; want signature %s", got.Method, got.URL.Path, body, got.Header, want)
	}

	status = http.StatusInternalServerError
	if res := s.Send(context.Background(), c, at, all); res.Err != nil || res.Status != 500 {
		t.Errorf("an answer of 500: %+v", res)
	}
	got = nil
	res = s.Send(context.Background(), c, at, func(netip.Addr) bool { return false })
	if res.Status != 0 || res.Err == nil || res.Err.Error() != "refusing to connect to 127.0.0.1: it is at 127.0.0.1, a loopback address (127.0.0.0/8)" || got != nil {
		t.Errorf("a refused address: %+v, reached %v", res, got != nil)
	}

	s.Count(webhook.Failed, 2)
	counts := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "palaver_webhook_deliveries_total" {
			for _, m := range mf.GetMetric() {
				counts[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if want := map[string]float64{"delivered": 0, "failed": 2, "gave_up": 0}; !maps.Equal(counts, want) {
		t.Errorf("palaver_webhook_deliveries_total: %v, want %v", counts, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
