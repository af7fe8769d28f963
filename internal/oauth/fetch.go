package oauth

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"time"

	"github.com/palaverhq/palaver/internal/egress"
)

// fetchTimeout bounds a whole fetch of a client ID metadata document:
// connecting, TLS, headers and body.
const fetchTimeout = 5 * time.Second

// Fetcher fetches client ID metadata documents for the Authority
// (DocumentFetcher) without being turned against the server's own
// network, through an egress client: https only, every address it
// connects to checked by the hub's rule at connect time, no proxy, no
// redirects; and a size cap. Its errors are described by
// egress.Describe.
type Fetcher struct {
	// RootCAs are the certificates trusted for the documents' hosts; nil:
	// the system's.
	RootCAs *x509.CertPool
	// Resolver looks up the documents' hosts; nil: the system's.
	Resolver egress.Resolver
}

// Fetch implements hub.DocumentFetcher.
func (f *Fetcher) Fetch(ctx context.Context, url string, allow func(netip.Addr) bool, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := egress.Client(egress.Options{Allow: allow, RootCAs: f.RootCAs, Timeout: fetchTimeout, Resolver: f.Resolver}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The status's own words are the remote's: show only the code's.
		return nil, &egress.Error{Msg: fmt.Sprintf("it answered %d %s, not 200 OK", resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > max {
		return nil, &egress.Error{Msg: fmt.Sprintf("it is over %d bytes", max)}
	}
	return body, nil
}
