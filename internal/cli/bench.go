package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/palaverhq/palaver/internal/bench"
)

// runBench: palaver bench (--spawn | --url URL --database DB [--pid PID])
// [--quick] [--workloads W1,…] [--postgres URL] [--dir DIR] — measures this
// machine's floors and the server under load (§17).
func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench", "bench (--spawn | --url URL --database DB [--pid PID]) [--quick] [--workloads W1,W2,…] [--postgres URL] [--dir DIR]")
	spawn := fs.Bool("spawn", false, "start a fresh server on a new database in --dir")
	url := fs.String("url", "", "run against this server, already running (its base URL), instead of spawning one")
	database := fs.String("database", "", "with --url: the server's database, where the bench makes its agents and tokens")
	pid := fs.Int("pid", 0, "with --url: the server's process id, to measure its CPU and memory (otherwise n/a)")
	quick := fs.Bool("quick", false, "short workloads: about a minute in all")
	workloads := fs.String("workloads", "", "comma-separated, from W1 to W7 (below); default all")
	postgres := fs.String("postgres", bench.DefaultPostgres, "PostgreSQL for W7, which makes a schema of its own there and drops it at the end")
	dir := fs.String("dir", "", "where the databases and report.md/report.json go (default ./bench-TIME)")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(e.stderr, "\nWorkloads, in the order they run, with a full run's sizes and --quick's:\n%s", bench.Help())
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := wantArgs(fs, pos, 0); err != nil {
		return err
	}
	switch {
	case *spawn == (*url != ""):
		return errors.New("give either --spawn (the bench starts its own server) or --url URL --database DB (a server already running)")
	case *url != "" && *database == "":
		return errors.New("--url needs --database: the bench makes its agents and tokens in the server's database, as the admin commands do")
	case *url == "" && (*database != "" || *pid != 0):
		return errors.New("--database and --pid go with --url")
	}
	o := bench.Options{URL: *url, Database: *database, PID: *pid, Dir: *dir, Quick: *quick, Progress: e.stderr, Postgres: *postgres}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "workloads" && strings.TrimSpace(*workloads) == "" {
			err = fmt.Errorf("--workloads is empty: name some of %s, or leave the flag out for all", strings.Join(bench.Names(), ", "))
		}
	})
	if err != nil {
		return err
	}
	for w := range strings.SplitSeq(*workloads, ",") {
		w = strings.ToUpper(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		if !slices.Contains(bench.Names(), w) {
			return fmt.Errorf("no workload %q: choose from %s", w, strings.Join(bench.Names(), ", "))
		}
		o.Workloads = append(o.Workloads, w)
	}
	if o.Dir == "" {
		o.Dir = "bench-" + time.Now().Format("20060102-150405")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	if o.Binary, err = os.Executable(); err != nil {
		return err
	}
	r, err := bench.Run(ctx, o)
	if r != nil { // also when some workloads failed: the report says which
		fmt.Fprint(e.stdout, r.Markdown())
		fmt.Fprintf(e.stdout, "\nReports: %s and %s\n", filepath.Join(o.Dir, "report.md"), filepath.Join(o.Dir, "report.json"))
	}
	return err
}
