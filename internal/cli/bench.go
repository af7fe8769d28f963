package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/bench"
)

// runBench: palaver bench --spawn [--quick] [--workloads W1,W2,W3] [--dir DIR]
// — measures this machine's floors and the server under load (§17).
func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench", "bench --spawn [--quick] [--workloads W1,W2,W3,W4,W5] [--dir DIR]")
	spawn := fs.Bool("spawn", false, "start a fresh server on a temporary database (required for now)")
	quick := fs.Bool("quick", false, "short workloads: about a minute in all")
	workloads := fs.String("workloads", "", "comma-separated: W1 (send throughput), W2 (send→wake), W3 (parked waiters), W4 (fan-out), W5 (history growth); default all")
	postgres := fs.String("postgres", bench.DefaultPostgres, "PostgreSQL for W7, which makes a schema of its own there and drops it at the end")
	dir := fs.String("dir", "", "where the database and report.md/report.json go (default ./bench-TIME)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	if !*spawn {
		return errors.New("give --spawn: the benchmark starts its own server on a temporary database")
	}
	if *dir == "" {
		*dir = "bench-" + time.Now().Format("20060102-150405")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	binary, err := os.Executable()
	if err != nil {
		return err
	}
	o := bench.Options{Binary: binary, Dir: *dir, Quick: *quick, Progress: e.stderr, Postgres: *postgres}
	if *workloads != "" {
		o.Workloads = strings.Split(strings.ToUpper(*workloads), ",")
	}
	r, err := bench.Run(ctx, o)
	if r != nil { // also when some workloads failed: the report says which
		fmt.Fprint(e.stdout, r.Markdown())
		fmt.Fprintf(e.stdout, "\nReports: %s and %s\n", filepath.Join(*dir, "report.md"), filepath.Join(*dir, "report.json"))
	}
	return err
}
