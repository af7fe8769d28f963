package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStampedBinary builds palaver the way scripts/release.sh and the
// Dockerfile do — static, cgo off, the version and revision set by
// -ldflags -X — and checks that `palaver version` prints them: a renamed
// variable would make -X stamp nothing, silently.
func TestStampedBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	bin := filepath.Join(t.TempDir(), "palaver")
	const pkg = "github.com/palaverhq/palaver/internal/build"
	cmd := exec.Command(goTool, "build", "-trimpath", "-o", bin,
		"-ldflags", "-s -w -X "+pkg+".version=v1.2.3 -X "+pkg+".revision=0123456789abcdef0123456789abcdef01234567",
		"github.com/palaverhq/palaver/cmd/palaver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("palaver version: %v", err)
	}
	want := "palaver v1.2.3 (0123456789ab) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if string(out) != want {
		t.Errorf("palaver version printed %q, want %q", out, want)
	}
	if strings.Contains(string(out), "devel") {
		t.Errorf("the stamp did not take: %q", out)
	}
}
