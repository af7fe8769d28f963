package cli

import (
	"context"
	"fmt"
	"runtime"

	"github.com/palaverhq/palaver/internal/build"
)

// runVersion: palaver version prints the release (or module version) and
// VCS revision, the same words the server logs on start and whoami gives
// as server_build.
func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	b := build.Current()
	goVersion := b.Go
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(e.stdout, "palaver %s %s %s/%s\n", b, goVersion, runtime.GOOS, runtime.GOARCH)
	return nil
}
