// Package build names the running binary: its version and VCS revision,
// for `palaver version`, the server's start-up log and whoami's
// server_build (DESIGN.md §10.1), all from this one place.
package build

import (
	"runtime/debug"
	"strings"
)

// Set by the release script and the Dockerfile, which know what the Go
// toolchain cannot always find out (a source tree without .git, a git
// worktree, GOFLAGS=-buildvcs=false):
//
//	-ldflags "-X github.com/palaverhq/palaver/internal/build.version=v1.2.0
//	          -X github.com/palaverhq/palaver/internal/build.revision=<commit>"
var (
	version  string
	revision string
)

// Info is what is known about the build.
type Info struct {
	// Version is the release (v1.2.0), the module version `go install
	// module@version` recorded, or "devel" when neither is known.
	Version string
	// Revision is the VCS commit (up to 12 hex digits), "" when unknown.
	Revision string
	// Modified reports uncommitted changes in the tree it was built from.
	Modified bool
	// Go is the toolchain that built it, like go1.26.0.
	Go string
}

// Current is the running binary's Info.
func Current() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(version, revision, bi)
}

// fromBuildInfo prefers what -ldflags stamped, then what the toolchain
// recorded: the main module's version and its vcs.* settings, or the commit
// inside a pseudo-version (v0.0.0-20260131120000-0123456789ab).
func fromBuildInfo(stampedVersion, stampedRevision string, bi *debug.BuildInfo) Info {
	in := Info{Version: stampedVersion, Revision: stampedRevision}
	if bi != nil {
		in.Go = bi.GoVersion
		mv := strings.TrimSuffix(bi.Main.Version, "+dirty")
		if in.Version == "" && mv != "" && mv != "(devel)" {
			in.Version = mv
		}
		modified := bi.Main.Version != mv
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if in.Revision == "" {
					in.Revision = s.Value
				}
			case "vcs.modified":
				modified = modified || s.Value == "true"
			}
		}
		// A stamped revision is the release script's word for the tree.
		in.Modified = modified && stampedRevision == ""
		if in.Revision == "" {
			in.Revision = pseudoRevision(mv)
		}
	}
	if in.Version == "" {
		in.Version = "devel"
	}
	if len(in.Revision) > 12 {
		in.Revision = in.Revision[:12]
	}
	return in
}

// pseudoRevision is the commit a pseudo-version names, or "".
func pseudoRevision(v string) string {
	i := strings.LastIndexByte(v, '-')
	if i < 0 || strings.Count(v, "-") < 2 {
		return ""
	}
	rev := v[i+1:]
	if len(rev) != 12 || strings.Trim(rev, "0123456789abcdef") != "" {
		return ""
	}
	return rev
}

// String is the version and, when known, the revision:
// "v1.2.0 (0123456789ab)", "devel (0123456789ab, modified)", "v1.2.0".
func (in Info) String() string {
	if in.Revision == "" {
		return in.Version
	}
	if in.Modified {
		return in.Version + " (" + in.Revision + ", modified)"
	}
	return in.Version + " (" + in.Revision + ")"
}
