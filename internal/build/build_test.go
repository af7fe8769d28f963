package build

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const commit = "cc5d1dbb7168cd78868e45607fd0789bc72d74a3"
	for _, tc := range []struct {
		name             string
		stamped, stampRe string
		bi               *debug.BuildInfo
		want             Info
		str              string
	}{
		{"no build info", "", "", nil, Info{Version: "devel"}, "devel"},
		{"go test, go run, a worktree: nothing recorded", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: "devel", Go: "go1.26.8"}, "devel"},
		{"go build in a clone", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(commit, "false")},
			Info{Version: "devel", Revision: "cc5d1dbb7168"}, "devel (cc5d1dbb7168)"},
		{"go build with changes", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.1-0.20261201112415-cc5d1dbb7168+dirty"}, Settings: vcs(commit, "true")},
			Info{Version: "v1.2.1-0.20261201112415-cc5d1dbb7168", Revision: "cc5d1dbb7168", Modified: true}, "v1.2.1-0.20261201112415-cc5d1dbb7168 (cc5d1dbb7168, modified)"},
		{"go install module@v1.2.0", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}},
			Info{Version: "v1.2.0"}, "v1.2.0"},
		{"go install module@commit: the pseudo-version names it", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201112415-cc5d1dbb7168"}},
			Info{Version: "v0.0.0-20261201112415-cc5d1dbb7168", Revision: "cc5d1dbb7168"}, "v0.0.0-20261201112415-cc5d1dbb7168 (cc5d1dbb7168)"},
		{"stamped by the release script", "v1.3.0", commit, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			Info{Version: "v1.3.0", Revision: "cc5d1dbb7168"}, "v1.3.0 (cc5d1dbb7168)"},
		{"stamped beats what the toolchain saw", "v1.3.0", commit, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20200101000000-aaaaaaaaaaaa+dirty"}, Settings: vcs("aaaaaaaaaaaabbbb", "true")},
			Info{Version: "v1.3.0", Revision: "cc5d1dbb7168"}, "v1.3.0 (cc5d1dbb7168)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromBuildInfo(tc.stamped, tc.stampRe, tc.bi)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("fromBuildInfo (-want +got):\n%s", d)
			}
			if got.String() != tc.str {
				t.Errorf("String() = %q, want %q", got.String(), tc.str)
			}
		})
	}
}

// TestCurrentStamped: what -ldflags -X sets is what Current reports.
func TestCurrentStamped(t *testing.T) {
	t.Cleanup(func() { version, revision = "", "" })
	version, revision = "v9.8.7", "0123456789abcdef0123"
	if got := Current().String(); got != "v9.8.7 (0123456789ab)" {
		t.Errorf("Current() = %q, want %q", got, "v9.8.7 (0123456789ab)")
	}
}
