package a2aclient_test

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/palaverhq/palaver/internal/a2aclient"
)

// TestCallsCounted: palaver_remote_calls_total shows every outcome of a
// remote call's attempt, at 0 until it happens, and counts what it is
// told.
func TestCallsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	c, err := a2aclient.NewCalls(reg)
	if err != nil {
		t.Fatal(err)
	}
	c.Count(a2aclient.Failed, 3)
	c.Count(a2aclient.Delivered, 1)
	counts := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "palaver_remote_calls_total" {
			for _, m := range mf.GetMetric() {
				counts[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if want := map[string]float64{"delivered": 1, "failed": 3, "gave_up": 0}; !maps.Equal(counts, want) {
		t.Errorf("palaver_remote_calls_total: %v, want %v", counts, want)
	}
}
