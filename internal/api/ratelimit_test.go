package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/palaverhq/palaver/internal/hub"
	"github.com/palaverhq/palaver/internal/servertest"
)

// TestTokenRateLimited: a person's token past its request rate (§15) gets
// 429 with Retry-After and the rate_limited error.
func TestTokenRateLimited(t *testing.T) {
	s := hub.DefaultSettings()
	s.TokenRate, s.TokenBurst = 0.001, 2
	srv := servertest.Open(t, servertest.Options{API: true, Settings: s})
	token := srv.Person(t, "alice")
	get := func() (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		json.Unmarshal(b, &out)
		return resp, out
	}
	for range 2 {
		if resp, out := get(); resp.StatusCode != http.StatusOK {
			t.Fatalf("within the burst: %d %v", resp.StatusCode, out)
		}
	}
	resp, out := get()
	delete(out, "trace")
	want := map[string]any{"retry_after_s": float64(1000), "error": map[string]any{"code": "rate_limited",
		"message": "this token is over its request rate of 0.001 a second (2 at once); try again in 1000 s, and make fewer calls at once"}}
	if diff := cmp.Diff(want, out); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1000" || diff != "" {
		t.Errorf("over the rate: %d Retry-After %q (-want +got):\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), diff)
	}
}
