package cli

import (
	"context"
	"strings"
	"testing"
)

func TestBenchUsage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"bench", "-h"}, 0, []string{"--url", "--pid", "--postgres", "\nW1  send throughput", "\nW6  soak", "\nW7  PostgreSQL"}},
		{[]string{"bench"}, 1, []string{"give either --spawn"}},
		{[]string{"bench", "--spawn", "--url", "http://127.0.0.1:8420"}, 1, []string{"give either --spawn"}},
		{[]string{"bench", "--url", "http://127.0.0.1:8420"}, 1, []string{"--url needs --database"}},
		{[]string{"bench", "--spawn", "--pid", "1"}, 1, []string{"--database and --pid go with --url"}},
		{[]string{"bench", "--spawn", "--workloads", "W1,W9"}, 1, []string{`no workload "W9"`}},
		{[]string{"bench", "--spawn", "--workloads", " w1, w9 "}, 1, []string{`no workload "W9"`}},
		{[]string{"bench", "--spawn", "--workloads", " "}, 1, []string{"--workloads is empty"}},
	} {
		code, _, stderr := run(t, ctx, nil, tc.args...)
		if code != tc.code {
			t.Errorf("palaver %v: exit %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("palaver %v: stderr does not mention %q:\n%s", tc.args, w, stderr)
			}
		}
	}
}
